import APRS
import Store

/// The schedule of a bulletin or announcement send (``Store/SendKind/bulletin``; docs/protocol.md "Bulletins and
/// announcements"): unnumbered copies on the fixed grid of ``APRS/BulletinSchedule`` (every 20 minutes for 4 hours,
/// or hourly for 4 days) from the send's start, moved, like a message's, by the time the transmit budget held its
/// copies back. Nobody answers a bulletin: it never expires; when its schedule is over it is `completed`.
extension SendScheduler {
  /// The schedule of `send`'s addressee; nil for a message, or for an addressee that is no bulletin address.
  static func bulletinSchedule(of send: InFlightSend) -> BulletinSchedule? {
    send.kind == .bulletin ? BulletinSchedule(addressee: send.addressee) : nil
  }

  /// When the next copy of `send` is due, given its last copy (nil before the first) and its budget delay: the
  /// first at its start (`createdAt + budgetDelayMs`), then the next slot of the grid after the last copy (slots
  /// missed while the link was down collapse into one copy); nil when the grid has none left. Pure.
  func nextCopy(of send: InFlightSend, lastSentAt: Int64?, budgetDelayMs: Int64) -> Int64? {
    guard let schedule = Self.bulletinSchedule(of: send) else {
      return nextCopy(createdAt: send.createdAt, lastSentAt: lastSentAt, budgetDelayMs: budgetDelayMs)
    }
    let start = send.createdAt + budgetDelayMs
    guard let last = lastSentAt else { return start }
    return schedule.nextSend(after: last, start: start)
  }

  /// When `send` ends without another copy: a message's expiry (``expiry(createdAt:lastSentAt:budgetDelayMs:)``);
  /// for a bulletin half an interval after the last slot of its grid (or its last copy, if later): the last
  /// copy may go that late (a sender that wakes late still sends it), and a bulletin whose last slot passed
  /// unsent for longer (the link was down) ends without a late copy. Its last copy ends it at once anyway. Pure.
  func expiry(of send: InFlightSend, lastSentAt: Int64?, budgetDelayMs: Int64) -> Int64 {
    guard let schedule = Self.bulletinSchedule(of: send) else {
      return expiry(createdAt: send.createdAt, lastSentAt: lastSentAt, budgetDelayMs: budgetDelayMs)
    }
    let gridEnd = send.createdAt + budgetDelayMs + schedule.durationMs + schedule.intervalMs / 2
    return max(gridEnd, lastSentAt ?? send.createdAt)
  }

  /// Why `send` must not go out (stored before its addressee was refused), nil when it may: a message to an
  /// addressee ``APRS/OutgoingMessage/addresseeProblem(_:login:)`` refuses, or a bulletin to no bulletin address.
  static func refusal(of send: InFlightSend) -> String? {
    switch send.kind {
    case .message: OutgoingMessage.addresseeProblem(send.addressee)
    case .bulletin: OutgoingMessage.bulletinAddresseeProblem(send.addressee)
    }
  }

  /// The line of a copy of `send`: numbered for a message, unnumbered for a bulletin.
  static func line(of send: InFlightSend) -> [UInt8] {
    guard send.kind == .message, let msgno = send.msgno else {
      return OutgoingMessage.unnumberedLine(from: send.station, to: send.addressee, text: send.text)
    }
    return OutgoingMessage.line(from: send.station, to: send.addressee, text: send.text, msgno: msgno)
  }
}
