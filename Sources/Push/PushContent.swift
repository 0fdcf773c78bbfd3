import Store

/// What one push says: the newest message of a station's burst, how many are waiting, and the
/// sender's avatar. Both providers' payloads are built from it (see `PushPayload`).
public struct PushContent: Sendable, Equatable {
  /// The station address the messages were sent to (data key `to`).
  public var station: String
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

  public init(
    station: String, fromCall: String, seqId: String?, text: String, count: Int, senders: [String] = [],
    avatar: PushAvatar = .none
  ) {
    self.station = station
    self.fromCall = fromCall
    self.seqId = seqId
    self.text = text
    self.count = count
    self.senders = senders
    self.avatar = avatar
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

  /// PROTOCOL.md's rules: one message shows its sender and text; several show "N new APRS
  /// messages" and who sent them. Without previews no message text appears at all.
  public static func make(_ content: PushContent, preview: Bool) -> NotificationText {
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
