// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`.
import APRS
import TestSupport
import Testing

@testable import Store

/// `Database+WeatherAlerts.swift`: the stations and subscriptions an alert's entries were stored for.
@Suite struct DatabaseWeatherAlertsTests {
  /// An NWS entry from `sender` numbered `msgno` for `station`'s subscription `subscription`.
  private static func alert(
    _ station: String, subscription: String, from sender: String = "RIWWSW", msgno: String,
    kind: SubscriptionKind = .nws
  ) -> IncomingMessage {
    IncomingMessage(
      station: station, peer: sender, text: "WINTER STORM WARNING", msgno: msgno,
      dedupKey: "\(sender):\(msgno):\(subscription)", dedupWindowMs: 60_000, to: "NWS-WARN",
      entry: SubscriptionEntry(kind: kind, subscription: subscription))
  }

  @Test func theSubscribersAreThoseOfTheSameSenderAndSequence() throws {
    let directory = try TempDirectory()
    defer { directory.remove() }
    let database = try openStore(directory.database)
    for station in ["N0CALL-1", "N0CALL-2", "N0CALL-3"] { try register(database, station) }
    let identity = WeatherAlertIdentity(sender: "RIWWSW", sequence: "JBNB")
    #expect(try database.alertSubscribers(of: identity, since: 0).isEmpty)
    _ = try database.storeMessages(
      [
        Self.alert("N0CALL-2", subscription: "s2", msgno: "JBNBA"),
        Self.alert("N0CALL-1", subscription: "s9", msgno: "JBNBA"),
        Self.alert("N0CALL-1", subscription: "s3", msgno: "JBNBB"),
        Self.alert("N0CALL-3", subscription: "s1", msgno: "JBNCA"),
        Self.alert("N0CALL-3", subscription: "s1", from: "OTHER", msgno: "JBNBA"),
        Self.alert("N0CALL-3", subscription: "s1", msgno: "jbnbA"),
        Self.alert("N0CALL-3", subscription: "s1", msgno: "JBNBA", kind: .bulletin),
      ], now: 10_000)
    let found = try database.alertSubscribers(of: identity, since: 0)
    #expect(found.map(\.station) == ["N0CALL-1", "N0CALL-2"], "in station order, each once")
    #expect(found.map(\.subscription) == ["s3", "s2"], "under the smallest subscription id")
    #expect(
      try database.alertSubscribers(of: WeatherAlertIdentity(sender: "RIWWSW", sequence: "jbnb"), since: 0)
        .map(
          \.station) == ["N0CALL-3"], "the letters' cases are different numbers")
    #expect(try database.alertSubscribers(of: identity, since: 10_002).map(\.station) == ["N0CALL-1"])
    #expect(try database.alertSubscribers(of: identity, since: 10_003).isEmpty, "entries stored before since")
  }
}
