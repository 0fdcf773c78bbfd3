import API
import Testing

@testable import Store

/// iOS push tokens at the API: hex only (a 400 naming `pushToken` otherwise), and stored lower case, since
/// FlutterFire hands the app its APNs token in upper case: every spelling of one device is one device.
@Suite struct APNsTokenTests {
  static let lower = String(repeating: "c0ffee", count: 10) + "abcd"
  static let upper = lower.uppercased()

  @Test func anUpperAndALowerCaseRegistrationOfOneTokenAreOneDevice() throws {
    let api = try APIFixture()
    let first = api.post("/v1/register", registerBody(["platform": "ios", "pushToken": Self.upper]))
    #expect(first.status == 200, "\(first.text)")
    let second = api.post(
      "/v1/heartbeat",
      ["callsign": "N0CALL", "ssid": 7, "platform": "ios", "pushToken": Self.lower, "auth": "13023"])
    #expect(second.status == 200, "\(second.text)")
    let again = api.post("/v1/register", registerBody(["platform": "ios", "pushToken": Self.upper]))
    #expect(again.status == 200)
    let devices = try api.database.devices(of: "N0CALL-7")
    #expect(devices.map(\.token) == [Self.lower])
    #expect(devices.first?.platform == .ios)
    // Unregistering the device in the app's spelling drops it.
    let gone = api.post(
      "/v1/unregister", ["callsign": "N0CALL", "ssid": 7, "auth": "13023", "pushToken": Self.upper])
    #expect(gone.status == 200)
    #expect(try api.database.devices(of: "N0CALL-7").isEmpty)
    #expect(try api.database.station("N0CALL-7") != nil)
  }

  @Test func aTokenThatIsNotHexIsA400NamingPushToken() throws {
    let api = try APIFixture()
    for bad in [
      "zz" + String(Self.lower.dropFirst(2)), Self.lower + "a", String(repeating: "ab", count: 101), "abcd",
      Self.lower.replacingOccurrences(of: "c", with: "-"), "fcm-token:APA91b-test",
    ] {
      let reply = api.post("/v1/register", registerBody(["platform": "ios", "pushToken": bad]))
      #expect(reply.status == 400, "\(bad)")
      #expect(reply.error?.contains("pushToken") == true, "\(reply.text)")
      #expect(reply.error?.contains("hex") == true, "\(reply.text)")
    }
    #expect(try api.database.station("N0CALL-7") == nil, "nothing stored for a refused registration")
    // FCM tokens are case-sensitive and stay as sent.
    let android = api.post("/v1/register", registerBody(["pushToken": "Fcm-Token:APA91b-Test"]))
    #expect(android.status == 200)
    #expect(try api.database.devices(of: "N0CALL-7").map(\.token) == ["Fcm-Token:APA91b-Test"])
  }
}
