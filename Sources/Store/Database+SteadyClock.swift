/// The floor of the listener's steady clock (`steadyEpochMilliseconds()`, Platform): the newest value of it the
/// database holds, so that a listener started after a backward step of the wall clock goes on from there instead
/// of finding its dedup windows and ACK times in its future.
extension Database {
  /// The newest dedup `first_seen` and ACK `last_sent_at` (epoch-like ms of the steady clock), 0 when none.
  public func steadyClockFloor() throws(StoreError) -> Int64 {
    let statement = try prepared(
      """
      SELECT max(coalesce((SELECT max(first_seen) FROM dedup), 0),
                 coalesce((SELECT max(last_sent_at) FROM ack_state), 0))
      """)
    defer { statement.reset() }
    return try statement.step() ? statement.int64(0) : 0
  }
}
