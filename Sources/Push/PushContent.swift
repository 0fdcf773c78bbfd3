import Store

/// What one push says: the newest message of a station's burst, how many are waiting, and the
/// sender's avatar. Both providers' payloads are built from it (see `PushPayload`).
public struct PushContent: Sendable, Equatable {
  /// The registered station the push is for (its collapse id and thread; data key `to` unless ``to`` is set).
  public var station: String
  /// The addressee of the newest message when it was another SSID of the station's call (setting `ssids`), for
  /// devices registered with `want:["ssids"]` only: the data key `to` names it instead of ``station``. Nil
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

  public init(
    station: String, fromCall: String, seqId: String?, text: String, count: Int, senders: [String] = [],
    avatar: PushAvatar = .none, kind: PushKind = .messages, to: String? = nil
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
  /// for `sendFailed` notices, so one never hides the other. At most 64 bytes.
  public var collapseID: String {
    switch kind {
    case .messages: PushPayload.collapseID(station: station)
    case .sendFailed: PushPayload.collapseID(station: station + "-sent")
    }
  }
}

/// What a push announces.
public enum PushKind: Sendable, Equatable {
  /// New messages for the station (the usual push).
  case messages
  /// A message the station sent ended `rejected` or `expired` (PROTOCOL.md: `kind:"sendFailed"`).
  case sendFailed(SendState)
}

/// The banner of a notification.
public struct NotificationText: Sendable, Equatable {
  public var title: String
  public var body: String

  public init(title: String, body: String) {
    self.title = title
    self.body = body
  }

  /// PROTOCOL.md's rules: one message shows its sender and text; several show "N new APRS
  /// messages" and who sent them. Without previews no message text appears at all.
  public static func make(_ content: PushContent, preview: Bool) -> NotificationText {
    if case .sendFailed(let state) = content.kind {
      let title =
        state == .rejected
        ? "\(content.fromCall) rejected your message" : "No answer from \(content.fromCall)"
      let reason =
        state == .rejected
        ? "The message was refused." : "The message was sent several times and never acknowledged."
      return NotificationText(title: title, body: preview ? content.text : reason)
    }
    if content.count <= 1 {
      return NotificationText(title: content.fromCall, body: preview ? content.text : "New APRS message")
    }
    var senders: [String] = [content.fromCall]
    for sender in content.senders where !senders.contains(sender) { senders.append(sender) }
    return NotificationText(title: "\(content.count) new APRS messages", body: "From " + list(senders))
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
