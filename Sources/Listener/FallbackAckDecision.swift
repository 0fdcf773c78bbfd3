/// What ``FallbackAckSchedule`` decided about a message to a `fallback` station: the caller acts on it.
enum FallbackAckDecision: Equatable, Sendable {
  /// Send this ACK now: the wait ended without the station's own answer (once per held message), or a later copy
  /// of a message the server already ACKed (as every copy is ACKed today). The caller puts it through the same
  /// 30 s rule as every ACK (`Database.ackDue`, `ackInterval`), after the message's commit.
  case sendAck(FallbackAckKey, ack: PlannedAck)
  /// The station's own radio answered within the wait (`rejected`: with `rej`): the server sends no ACK for this
  /// message, and the entry is `answeredBy:"air"`. Given once per message.
  case answeredByAir(FallbackAckKey, rejected: Bool)

  /// The message decided.
  var key: FallbackAckKey {
    switch self {
    case .sendAck(let key, _), .answeredByAir(let key, _): key
    }
  }
}
