import Foundation
import TestSupport
import Testing

@testable import Store

/// Web Push and UnifiedPush devices: the endpoint URL as the token, the subscription keys beside it
/// (migration 009), and the endpoint rules the API and the sender share.
@Suite struct WebPushDeviceTests {
  static let p256dh =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
  static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
  static let endpoint = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bEXAMPLE"

  static func upsert(_ platform: DevicePlatform, _ token: String, keys: WebPushKeys?) -> StationUpsert {
    StationUpsert(
      address: "N0CALL-7", base: "N0CALL", ssid: 7, platform: platform, pushToken: token, ackMessages: false,
      isRegistration: true, webPushKeys: keys)
  }

  @Test func keysAreStoredWithTheDeviceAndReplacedOnTheNextRegistration() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    defer { database.close() }
    let keys = try #require(WebPushKeys(p256dh: Self.p256dh, auth: Self.auth))
    try database.upsertStation(Self.upsert(.webpush, Self.endpoint, keys: keys), now: 1_000)
    let device = try #require(try database.devices(of: "N0CALL-7").first)
    #expect(device.platform == .webpush)
    #expect(device.token == Self.endpoint)
    #expect(device.webPushKeys == keys)
    #expect(device.apnsEnvironment == nil)
    // As stored: unpadded base64url.
    #expect(
      try database.columnTexts("SELECT push_p256dh || ' ' || push_auth FROM devices")
        == ["\(Self.p256dh) \(Self.auth)"])

    // The browser renewed its keys for the same endpoint: one row, the new keys.
    let renewed = try #require(WebPushKeys(p256dh: Self.p256dh, auth: "AAAAAAAAAAAAAAAAAAAAAA"))
    try database.upsertStation(Self.upsert(.webpush, Self.endpoint, keys: renewed), now: 2_000)
    let devices = try database.devices(of: "N0CALL-7")
    #expect(devices.count == 1)
    #expect(devices.first?.webPushKeys == renewed)
    #expect(devices.first?.refreshedAt == 2_000)

    // A UnifiedPush endpoint without keys stores none; an Android token never carries any.
    try database.upsertStation(
      Self.upsert(.unifiedpush, "https://ntfy.example.org/upAbC?up=1", keys: nil), now: 3_000)
    try database.upsertStation(Self.upsert(.android, "fcm-token-123", keys: keys), now: 4_000)
    let byToken = Dictionary(
      uniqueKeysWithValues: try database.devices(of: "N0CALL-7").map { ($0.token, $0) })
    #expect(byToken["https://ntfy.example.org/upAbC?up=1"]?.platform == .unifiedpush)
    #expect(byToken["https://ntfy.example.org/upAbC?up=1"]?.webPushKeys == nil)
    #expect(byToken["fcm-token-123"]?.webPushKeys == nil)
    #expect(
      try database.columnTexts("SELECT token FROM devices WHERE push_auth IS NOT NULL") == [Self.endpoint])
    // Unregistering one endpoint drops that device only.
    #expect(try database.deleteDevice(token: Self.endpoint, station: "N0CALL-7"))
    #expect(try database.devices(of: "N0CALL-7").count == 2)
  }

  @Test func migration009AddsTheKeyColumnsToAnOldDatabase() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let old = try openStore(dir.database, migrate: false)
    #expect(try old.migrate(upTo: 8) == 8)
    try old.execute(
      """
      INSERT INTO stations (address, base, ssid, platform, ack_messages, registered_at, heartbeat_at)
      VALUES ('N0CALL-7', 'N0CALL', 7, 'android', 0, 1000, 1000);
      INSERT INTO devices (token, station, platform, registered_at, refreshed_at)
      VALUES ('fcm-token-old', 'N0CALL-7', 'android', 1000, 1000);
      """)
    #expect(try old.migrate() == Database.latestSchemaVersion)
    #expect(Database.latestSchemaVersion >= 9)
    #expect(try old.devices(of: "N0CALL-7").first?.webPushKeys == nil)
    // The columns hold only the shapes of the keys.
    #expect(throws: StoreError.self) { try old.execute("UPDATE devices SET push_auth = 'short'") }
    #expect(throws: StoreError.self) { try old.execute("UPDATE devices SET push_p256dh = 'short'") }
    old.close()
  }

  @Test func keysNeedTheirShapes() {
    #expect(WebPushKeys(p256dh: Self.p256dh, auth: Self.auth) != nil)
    // Padded base64url and standard base64 decode too (the bytes are what count).
    #expect(WebPushKeys(p256dh: Self.p256dh + "=", auth: Self.auth + "==")?.authText == Self.auth)
    #expect(WebPushKeys(p256dh: Self.p256dh, auth: String(Self.auth.dropLast(2))) == nil)
    #expect(WebPushKeys(p256dh: String(Self.p256dh.dropLast(4)), auth: Self.auth) == nil)
    #expect(WebPushKeys(p256dh: "C" + Self.p256dh.dropFirst(), auth: Self.auth) == nil)
    #expect(WebPushKeys(p256dh: Self.p256dh, auth: "not base64!!!!!!!!!!!!") == nil)
  }

  @Test func endpointsAreHTTPSURLsWithAnOrigin() throws {
    let fcm = try #require(WebPushEndpoint(Self.endpoint))
    #expect(fcm.origin == "https://fcm.googleapis.com")
    #expect(fcm.port == 443)
    #expect(
      WebPushEndpoint("HTTPS://Push.Example.ORG:8443/a/b?c=d")?.origin == "https://push.example.org:8443")
    #expect(WebPushEndpoint("https://push.example.org:443/x")?.origin == "https://push.example.org")
    #expect(WebPushEndpoint("https://[2001:db8::1]:9000/p")?.origin == "https://[2001:db8::1]:9000")
    #expect(WebPushEndpoint("https://127.0.0.1:4443/push/s1")?.origin == "https://127.0.0.1:4443")
    #expect(WebPushEndpoint("https://ntfy.sh/upXYZ?up=1") != nil)
    let maximal = "https://a.example/" + String(repeating: "x", count: WebPushEndpoint.maxBytes - 18)
    #expect(WebPushEndpoint(maximal) != nil)
    for bad in [
      "", "https://", "http://push.example.org/x", "ftp://push.example.org/x", "push.example.org/x",
      "https:///path", "https://user@push.example.org/x", "https://user:pw@push.example.org/x",
      "https://push.example.org:0/x", "https://push.example.org:65536/x", "https://push.example.org:http/x",
      "https://push example.org/x", "https://push.example.org/a b", "https://push.example.org/x#frag",
      "https://push.example.org/\u{7F}", "https://push.example.org/é", "https://push.example.org/\"x\"",
      "https://push.example.org/<x>", "https://[::1/x", "https://[zz::1]/x", "https://.example.org/x",
      "https://-example.org/x", "https://push.example.org\r\nX: y", maximal + "x",
    ] {
      #expect(WebPushEndpoint(bad) == nil, "\(bad)")
    }
  }

  @Test func privateHostsAreNamed() throws {
    for host in [
      "localhost", "foo.localhost", "127.0.0.1", "127.9.9.9", "10.1.2.3", "172.16.0.1", "172.31.255.255",
      "192.168.1.1", "169.254.169.254", "0.0.0.0", "100.64.0.1", "[::1]", "[::]", "[fd00::1]", "[fe80::1]",
      "[::ffff:127.0.0.1]", "[::ffff:10.0.0.1]",
    ] {
      #expect(try #require(WebPushEndpoint("https://\(host)/p")).isPrivateHost, "\(host)")
    }
    for host in [
      "fcm.googleapis.com", "8.8.8.8", "172.32.0.1", "172.15.0.1", "192.169.0.1", "100.128.0.1",
      "[2001:db8::1]", "[::ffff:8.8.8.8]", "localhost.example.org", "10.example.org",
    ] {
      #expect(try #require(WebPushEndpoint("https://\(host)/p")).isPrivateHost == false, "\(host)")
    }
  }

  /// The literal check is `IPAddress.reservedRange` (Platform), so every reserved block counts, in any IPv6
  /// spelling and every IPv4 form a resolver reads as a literal (`127.1`, `2130706433`, `0x7f000001`,
  /// `0177.0.0.1`); a root's trailing dot hides neither `localhost` nor an address. Names are not literals:
  /// the push sender judges them by the addresses they resolve to.
  @Test func everyReservedBlockAndSpellingIsPrivate() throws {
    for host in [
      "localhost.", "foo.localhost.", "198.18.0.1", "224.0.0.1", "255.255.255.255", "[ff02::1]",
      "[::ffff:7f00:1]", "[64:ff9b::a9fe:a9fe]", "[FD00::1]", "[fec0::1]", "127.1", "127.0.1", "2130706433",
      "0x7f000001", "0177.0.0.1", "127.0.0.1.", "10.0.0.1.", "0", "0x0a000001", "167772161",
    ] {
      #expect(try #require(WebPushEndpoint("https://\(host)/p")).isPrivateHost, "\(host)")
    }
    for host in ["8.8.2056", "134744072", "[64:ff9b::808:808]", "[2606:4700::1111]", "0x8.example.org"] {
      #expect(try #require(WebPushEndpoint("https://\(host)/p")).isPrivateHost == false, "\(host)")
    }
  }
}
