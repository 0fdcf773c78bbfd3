import APRS

/// One message to a `fallback` station, as its ACK is decided: the station, the message's sender and its number.
///
/// The two calls are kept as ``StationAddress/canonical(_:)`` gives them (trimmed, upper case, `CALL-0` as `CALL`,
/// SSID exact), so `n0call-7`, `N0CALL-7` and a 9-character addressee field's `N0CALL-7  ` are one station and
/// `N0CALL` and `N0CALL-7` are two. The number is compared exactly (APRS101 ch. 14; 1–5 alphanumerics): for a
/// reply-ack message `{MM}AA` it is `MM` (its `AA` changes between retries; the store's dedup keys on `MM` alone too).
struct FallbackAckKey: Hashable, Sendable, CustomStringConvertible {
  /// The station the message is to (the `fallback` station).
  let station: String
  /// The message's sender, whom the ACK goes to.
  let sender: String
  /// The message number.
  let msgno: String

  init(station: some StringProtocol, sender: some StringProtocol, msgno: some StringProtocol) {
    self.station = StationAddress.canonical(station)
    self.sender = StationAddress.canonical(sender)
    self.msgno = String(msgno)
  }

  /// `N0CALL-7<OH7AA-1#12`: to, from, number.
  var description: String { "\(station)<\(sender)#\(msgno)" }
}
