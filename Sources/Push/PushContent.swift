import APRS
import Store

/// What one push says: the newest message of a station's burst, how many are waiting, and the
/// sender's avatar. Both providers' payloads are built from it (see `PushPayload`).
public struct PushContent: Sendable, Equatable {
  /// The registered station the push is for (its collapse id and thread; data key `to` unless ``to`` is set).
  public var station: String
  /// The addressee of the newest entry when it was another SSID of the station's call (setting `ssids`, for
  /// devices registered with `want:["ssids"]` only) or the addressee of a subscription entry (`BLN1WX`, a group,
  /// an NWS product; `want:["subscriptions"]` only): the data key `to` names it instead of ``station``. Nil
  /// otherwise, so every other push is exactly as before.
  public var to: String?
  /// The sender of the newest message (data key `fromCall`).
  public var fromCall: String
  /// The newest message's number, nil when it had none (data key `seqId`, `""` then).
  public var seqId: String?
  /// The newest message's text (shown only with previews on and a single message).
  public var text: String
  /// Messages the station has not pulled yet (data key `count`).
  public var count: Int
  /// Distinct senders of those messages, newest first (named when there are several).
  public var senders: [String]
  /// The sender's avatar.
  public var avatar: PushAvatar
  /// What the push announces: new messages, or (for `sendFailed`) that a message the station sent through
  /// `/v1/send` ended `rejected` or `expired`.
  public var kind: PushKind
  /// What makes the newest entry a subscription entry (a bulletin, a group or NWS message, a watch event), for
  /// devices registered with `want:["subscriptions"]` only: the push then carries `type`, `subscription` (and
  /// `event`), names the entry in its banner and has a collapse id of its own. Nil for a message, so every other
  /// push is exactly as before.
  public var entry: SubscriptionEntry?
  /// How urgently the providers deliver it: low when it announces only subscription entries that are not
  /// urgent (``Store/SubscriptionEntry/isUrgent``), else high.
  public var priority: PushPriority
  /// For a room's digest push (a net's entry): the room's entries since its previous digest (data key
  /// `roomCount`); nil for every other push.
  public var roomCount: Int?

  public init(
    station: String, fromCall: String, seqId: String?, text: String, count: Int, senders: [String] = [],
    avatar: PushAvatar = .none, kind: PushKind = .messages, to: String? = nil,
    entry: SubscriptionEntry? = nil,
    priority: PushPriority = .high
  ) {
    self.station = station
    self.to = to
    self.fromCall = fromCall
    self.seqId = seqId
    self.text = text
    self.count = count
    self.senders = senders
    self.avatar = avatar
    self.kind = kind
    self.entry = entry
    self.priority = priority
  }

  /// The station address the newest message was sent to: ``to`` when set, else ``station`` (data key `to`).
  public var addressee: String { to ?? station }

  /// The notice that the station's message `seqId` to `to` ended `state` (`rejected` or `expired`).
  public static func sendFailed(station: String, to: String, seqId: String?, text: String, state: SendState)
    -> PushContent
  {
    PushContent(station: station, fromCall: to, seqId: seqId, text: text, count: 0, kind: .sendFailed(state))
  }

  /// The collapse id of this push: one per station for messages (the OS replaces the previous banner), another
  /// for `sendFailed` notices and another for subscription entries, so one never hides another. At most 64 bytes.
  public var collapseID: String { PushPayload.collapseID(station: collapseName) }

  /// What the collapse id is made from: the station, `<station>-sent` for a `sendFailed` notice,
  /// `<station>-subs` for a subscription entry, `<station>-net-<GROUP>` for a room's digest (also the Web Push
  /// `Topic` of such a push).
  public var collapseName: String {
    switch kind {
    case .messages:
      if let room = entry?.room {
        station + "-net-" + room.group
      } else {
        entry == nil ? station : station + "-subs"
      }
    case .sendFailed: station + "-sent"
    case .claimCode: station + "-claim"
    case .forwardDisabled: station + "-forward"
    }
  }
}

/// How urgently a push is delivered.
public enum PushPriority: Sendable, Equatable {
  /// At once, waking the device: messages, a watched station's emergency. FCM `android.priority` `high`, APNs
  /// `apns-priority: 10`, Web Push `Urgency: high`.
  case high
  /// When the device's power allows (only subscription entries that are not urgent): FCM `normal`, APNs
  /// `apns-priority: 5` (Apple may group such alerts, deliver them in bursts or throttle them), Web Push
  /// `Urgency: low` (RFC 8030 §5.3: delivered when the device is on power and Wi-Fi, or awake anyway).
  case low
}

/// What a push announces.
public enum PushKind: Sendable, Equatable {
  /// New messages for the station (the usual push).
  case messages
  /// A message the station sent ended `rejected` or `expired` (docs/protocol.md: `kind:"sendFailed"`).
  case sendFailed(SendState)
  /// Someone claims the station on this server: the code that proves the claim, for the device's owner to enter
  /// if the claim is theirs (docs/design.md "Who may do what"). The code is in the banner only, never in the data.
  case claimCode(ClaimNotice)
  /// One of the station's forward targets was disabled (docs/api.md "Forwarding (email, ntfy, webhooks)"): told once to the owner's devices.
  case forwardDisabled(ForwardNotice)
}

/// What a claim code push says: the code, from where the claim came, how long the code works.
public struct ClaimNotice: Sendable, Equatable {
  /// The six digits.
  public var code: String
  /// Whether the claim would take the station back from a claim it has (else: the station is not claimed yet).
  public var takesBack: Bool
  /// Minutes the code works.
  public var validMinutes: Int

  public init(code: String, takesBack: Bool, validMinutes: Int) {
    self.code = code
    self.takesBack = takesBack
    self.validMinutes = validMinutes
  }
}

/// The banner of a notification.
public struct NotificationText: Sendable, Equatable {
  public var title: String
  public var body: String

  public init(title: String, body: String) {
    self.title = title
    self.body = body
  }

  /// docs/protocol.md's rules: one message shows its sender and text; several show "N new APRS
  /// messages" and who sent them. Without previews no message text appears at all. A push whose newest entry is
  /// a subscription entry has the banner of its kind (``subscription(_:_:preview:)``).
  public static func make(_ content: PushContent, preview: Bool) -> NotificationText {
    if case .claimCode(let notice) = content.kind { return claim(content.station, notice) }
    if case .forwardDisabled(let notice) = content.kind { return notice.text(station: content.station) }
    if case .sendFailed(let state) = content.kind {
      let title =
        state == .rejected
        ? "\(content.fromCall) rejected your message" : "No answer from \(content.fromCall)"
      let reason =
        state == .rejected
        ? "The message was refused." : "The message was sent several times and never acknowledged."
      return NotificationText(title: title, body: preview ? content.text : reason)
    }
    if let entry = content.entry { return subscription(content, entry, preview: preview) }
    if content.count <= 1 {
      return NotificationText(title: content.fromCall, body: preview ? content.text : "New APRS message")
    }
    var senders: [String] = [content.fromCall]
    for sender in content.senders where !senders.contains(sender) { senders.append(sender) }
    return NotificationText(title: "\(content.count) new APRS messages", body: "From " + list(senders))
  }

  /// The banner of a claim code push, whatever the previews: the code, what it does, and what to do when the claim
  /// is not the device owner's (nothing: the claim gets no power over this device; the station can be taken back).
  static func claim(_ station: String, _ notice: ClaimNotice) -> NotificationText {
    let what =
      notice.takesBack
      ? "Someone asks to take over \(station) on this APRS server."
      : "Someone claims \(station) on this APRS server."
    return NotificationText(
      title: "\(station): claim code \(notice.code)",
      body: what
        + " If it is you, enter \(notice.code) where you claimed it (valid \(notice.validMinutes) min)."
        + " If not, ignore this: this device keeps getting the station's messages, and you can take the station"
        + " back from the server's web page with a code sent to this device.")
  }

  /// The banner of a push whose newest entry is a subscription entry: the entry's own title (`Bulletin BLN1WX
  /// from WX1ABC`, `SLCARES: KJ7ABC`, `NWS-WARN from NWS`, `K1ABC heard`, `K1ABC is silent`, `EMERGENCY: K1ABC`)
  /// and its text (with previews; a generic line without). Several unpulled entries: "N new APRS messages and
  /// alerts" and their senders, except for an emergency, whose banner always names it.
  static func subscription(_ content: PushContent, _ entry: SubscriptionEntry, preview: Bool)
    -> NotificationText
  {
    if let room = entry.room { return net(content, room: room, preview: preview) }
    if content.count > 1 && !entry.isUrgent {
      var senders: [String] = [content.fromCall]
      for sender in content.senders where !senders.contains(sender) { senders.append(sender) }
      return NotificationText(
        title: "\(content.count) new APRS messages and alerts", body: "From " + list(senders))
    }
    let peer = content.fromCall
    let to = content.addressee
    let title: String
    let generic: String
    switch entry.kind {
    case .bulletin: (title, generic) = ("Bulletin \(to) from \(peer)", "New APRS bulletin")
    case .group: (title, generic) = ("\(to): \(peer)", "New APRS group message")
    case .nws: (title, generic) = ("\(to) from \(peer)", "New NWS alert")
    case .net: (title, generic) = ("\(to): \(peer)", "New net message")
    case .watch:
      switch entry.event {
      case .heard: (title, generic) = ("\(peer) heard", "A watched station was heard")
      case .silent: (title, generic) = ("\(peer) is silent", "A watched station went silent")
      case .emergency: (title, generic) = ("EMERGENCY: \(peer)", "A watched station reported an emergency")
      case nil: (title, generic) = (peer, "A watched station")
      }
    }
    return NotificationText(title: title, body: preview ? content.text : generic)
  }

  /// The banner of a room's digest push (``PushContent/roomCount``): one entry as `HOTG net: K1ABC` and its text
  /// (with previews), several as `HOTG net: 12 new` and `Last from K1ABC`.
  static func net(_ content: PushContent, room: NetRoom, preview: Bool) -> NotificationText {
    let count = content.roomCount ?? 1
    guard count > 1 else {
      return NotificationText(
        title: "\(room.group) net: \(content.fromCall)", body: preview ? content.text : "New net message")
    }
    return NotificationText(title: "\(room.group) net: \(count) new", body: "Last from \(content.fromCall)")
  }

  /// `A`, `A and B`, `A, B and C`, `A, B, C and 2 others`.
  static func list(_ names: [String]) -> String {
    let shown = 3
    if names.count <= 1 { return names.first ?? "" }
    if names.count <= shown {
      return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    }
    let others = names.count - shown
    return names.prefix(shown).joined(separator: ", ") + " and \(others) "
      + (others == 1 ? "other" : "others")
  }
}
