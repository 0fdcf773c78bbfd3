import APRS

/// The stored weather alerts a continuing line belongs to (`sql/022_weather_alerts_and_emergencies.sql`,
/// index `messages_alerts`).
extension Database {
  /// The stations and subscriptions that NWS entries of the alert `identity` were stored for at or after
  /// `since` (epoch ms, the entries' timestamps): entries from `identity.sender` whose `{` number starts with
  /// `identity.sequence` (compared as sent: the servers' letters of both cases are different numbers). In
  /// station order, each station once (under the smallest subscription id when its entries name several).
  public func alertSubscribers(of identity: WeatherAlertIdentity, since: Int64) throws(StoreError)
    -> [(station: String, subscription: String)]
  {
    // Numbers are letters and digits, all below `~`: the range is exactly those starting with the sequence.
    let statement = try prepared(
      """
      SELECT station, min(subscription) FROM messages
      WHERE kind = 'nws' AND peer = ?1 AND msgno > ?2 AND msgno < ?3 AND timestamp >= ?4
        AND subscription IS NOT NULL
      GROUP BY station ORDER BY station
      """)
    defer { statement.reset() }
    try statement.bind(1, identity.sender)
    try statement.bind(2, identity.sequence)
    try statement.bind(3, identity.sequence + "~")
    try statement.bind(4, since)
    var found: [(station: String, subscription: String)] = []
    while try statement.step() { found.append((statement.text(0), statement.text(1))) }
    return found
  }
}
