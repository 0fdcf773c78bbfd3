/// What the listener learnt of a message held for the station's own radio (`ackPolicy:"fallback"`,
/// docs/design.md "Hearing the station's own radio"): the message's `answered_by` and its held push
/// (sql/024_own_radio.sql).
extension Database {
  /// How a held message was decided.
  public enum FallbackDecision: Sendable, Equatable {
    /// The station's own radio answered it within the wait: the message is `answered_by = 'air'`, and its push
    /// goes as `airAnswered` says (``AirAnswered/none``: not at all).
    case answeredByAir(AirAnswered)
    /// The wait ended without the radio's answer; the server ACKed it: its push goes as any push.
    case serverAcked
  }

  /// Applies `decision` to the newest received message of `station` (canonical) from `sender` (canonical)
  /// numbered `msgno` (the number alone; a stored `MM}AA` matches `MM`), within the caller's write transaction.
  /// Its push, held by ``IncomingMessage/pushHoldMs``, is made due at `now` (epoch ms) or, for
  /// ``AirAnswered/none``, dropped. Returns whether a push was made due (the caller wakes the push sender); false
  /// also when no such message is stored (its ring moved on, the station was deleted).
  public func decideHeldMessage(
    station: String, sender: String, msgno: String, _ decision: FallbackDecision, now: Int64
  ) throws(StoreError) -> Bool {
    guard let (id, _) = try heldMessage(station: station, sender: sender, msgno: msgno) else { return false }
    if case .answeredByAir(let push) = decision {
      let mark = try prepared("UPDATE messages SET answered_by = 'air' WHERE id = ?1")
      defer { mark.reset() }
      try mark.bind(1, id)
      try mark.run()
      if push == .none {
        let drop = try prepared(
          "DELETE FROM outbox WHERE message_id = ?1 AND state = 'pending' AND attempts = 0")
        defer { drop.reset() }
        try drop.bind(1, id)
        try drop.run()
        return false
      }
    }
    let release = try prepared(
      """
      UPDATE outbox SET next_attempt_at = ?2, created_at = min(created_at, ?2)
      WHERE message_id = ?1 AND state = 'pending' AND attempts = 0 AND next_attempt_at >= ?2
      """)
    defer { release.reset() }
    try release.bind(1, id)
    try release.bind(2, now)
    try release.run()
    return changes > 0
  }
}

extension Database {
  /// Who answered the newest received message of `station` from `sender` numbered `msgno` (canonical calls, the
  /// number alone), as stored: ``AnsweredBy/air`` or nil (the server, or not stored).
  public func answeredBy(station: String, sender: String, msgno: String) throws(StoreError) -> AnsweredBy? {
    try heldMessage(station: station, sender: sender, msgno: msgno)?.answeredBy
  }

  /// The id and `answered_by` of the newest received message of `station` from `sender` numbered `msgno`.
  private func heldMessage(station: String, sender: String, msgno: String) throws(StoreError)
    -> (id: Int64, answeredBy: AnsweredBy?)?
  {
    let find = try prepared(
      """
      SELECT id, answered_by FROM messages
      WHERE station = ?1 AND direction = 'received' AND addressee IS NULL AND kind IS NULL AND peer = ?2
        AND (msgno = ?3 OR substr(msgno, 1, length(?3) + 1) = ?3 || '}')
      ORDER BY timestamp DESC LIMIT 1
      """)
    defer { find.reset() }
    try find.bind(1, station)
    try find.bind(2, sender)
    try find.bind(3, msgno)
    guard try find.step() else { return nil }
    return (find.int64(0), find.optionalValue(1))
  }

  /// The peers' acks and rejs of what the stations' own radios sent (`trackSent`): each receipt makes the newest
  /// `sent` entry of its station to that peer with that number (the number alone; a stored `MM}AA` matches `MM`)
  /// `acked` or `rejected`, re-stamped so the next sync carries the change, inside the caller's write transaction.
  /// An entry already answered stays as it is (a repeated ack changes nothing). Returns how many entries changed.
  public func answerHeardSends(_ receipts: [DeliveryReceipt], now: Int64) throws(StoreError) -> Int {
    guard !receipts.isEmpty else { return 0 }
    let find = try prepared(
      """
      SELECT id FROM messages
      WHERE station = ?1 AND direction = 'sent' AND heard_state = 'sent' AND peer = ?2
        AND (msgno = ?3 OR substr(msgno, 1, length(?3) + 1) = ?3 || '}')
      ORDER BY timestamp DESC LIMIT 1
      """)
    let update = try prepared("UPDATE messages SET heard_state = ?2, timestamp = ?3 WHERE id = ?1")
    var changed = 0
    for receipt in receipts {
      let id: Int64
      do {
        defer { find.reset() }
        try find.bind(1, receipt.station.canonicalAddress)
        try find.bind(2, receipt.peer.canonicalAddress)
        try find.bind(3, receipt.msgno)
        guard try find.step() else { continue }
        id = find.int64(0)
      }
      let timestamp = try nextMessageTimestamp(now: now)
      defer { update.reset() }
      try update.bind(1, id)
      try update.bind(2, receipt.kind == .rej ? HeardState.rejected : HeardState.acked)
      try update.bind(3, timestamp)
      try update.run()
      changed += 1
    }
    return changed
  }
}
