import API
import Foundation
import JSON
import Store
import Synchronization
import Testing

/// `platform:"webpush"` and `"unifiedpush"` at register and heartbeat, and `GET /v1/info`.
@Suite struct WebPushAPITests {
  static let endpoint = "https://fcm.googleapis.com/fcm/send/dQw4w9WgXcQ:APA91bEXAMPLE"
  static let p256dh =
    "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"
  static let auth = "BTBZMqHH6r4Tts7J_aSIgg"
  static let vapidKey =
    "BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"

  /// A register body with a browser's `PushSubscription.toJSON()` in it.
  static func subscription(_ extra: [String: Any] = [:]) -> [String: Any] {
    registerBody(
      ["platform": "webpush", "pushToken": endpoint, "pushKeys": ["p256dh": p256dh, "auth": auth]].merging(
        extra
      ) {
        $1
      })
  }

  @Test func aBrowserSubscriptionRegistersWithItsKeys() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", Self.subscription())
    #expect(reply.status == 200, "\(reply.text)")
    let device = try #require(try api.database.devices(of: "N0CALL-7").first)
    #expect(device.platform == .webpush)
    #expect(device.token == Self.endpoint)
    #expect(device.webPushKeys?.p256dhText == Self.p256dh)
    #expect(device.webPushKeys?.authText == Self.auth)
    // A heartbeat carries the same fields; padded base64url is the same key.
    let heartbeat = api.post(
      "/v1/heartbeat",
      Self.subscription(["pushKeys": ["p256dh": Self.p256dh + "=", "auth": Self.auth + "=="]]))
    #expect(heartbeat.status == 200, "\(heartbeat.text)")
    #expect(try api.database.devices(of: "N0CALL-7").map(\.webPushKeys?.authText) == [Self.auth])
  }

  @Test func unifiedPushMayComeWithoutKeys() throws {
    let api = try APIFixture()
    let endpoint = "https://ntfy.example.org/upAbCdEf?up=1"
    #expect(
      api.post("/v1/register", registerBody(["platform": "unifiedpush", "pushToken": endpoint])).status == 200
    )
    let device = try #require(try api.database.devices(of: "N0CALL-7").first)
    #expect(device.platform == .unifiedpush)
    #expect(device.webPushKeys == nil)
    // With keys, they are kept.
    let withKeys = registerBody([
      "platform": "unifiedpush", "pushToken": endpoint,
      "pushKeys": ["p256dh": Self.p256dh, "auth": Self.auth],
    ])
    #expect(api.post("/v1/register", withKeys).status == 200)
    #expect(try api.database.devices(of: "N0CALL-7").first?.webPushKeys?.authText == Self.auth)
  }

  /// `pushKeys` is read only for a Web Push or UnifiedPush endpoint, but one that is not an object is a 400 with any
  /// platform, or none (schemathesis: the wrong JSON type of a known field is a 400, docs/protocol.md).
  @Test func pushKeysOfTheWrongTypeIsA400WhateverThePlatform() throws {
    let api = try APIFixture()
    let bodies: [[String: Any]] = [
      ["pushKeys": "x"],
      ["pushKeys": 7, "platform": "android", "pushToken": "fcm-token:APA91b-example"],
      [
        "pushKeys": [Self.p256dh, Self.auth], "platform": "ios",
        "pushToken": String(repeating: "ab", count: 32),
      ],
    ]
    for change in bodies {
      for path in ["/v1/register", "/v1/heartbeat"] {
        var body: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]
        body.merge(change) { $1 }
        let reply = api.post(path, body)
        #expect(reply.status == 400, "\(path) \(change): \(reply.text)")
        #expect(reply.error?.hasPrefix("pushKeys must be an object") == true, "\(path): \(reply.text)")
      }
    }
    // An object is not read without an endpoint (a sync-only desktop, an FCM token), whatever it holds.
    var syncOnly: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]
    syncOnly["pushKeys"] = ["auth": ""]
    #expect(api.post("/v1/register", syncOnly).status == 200)
  }

  @Test func badSubscriptionsAreClear400sNamingTheField() throws {
    let api = try APIFixture()
    var offCurve = try #require(WebPushKeys.decode(Self.p256dh))
    offCurve[64] ^= 1
    let offCurveText = try #require(WebPushKeys(p256dh: offCurve, auth: [UInt8](repeating: 0, count: 16)))
      .p256dhText
    let cases: [([String: Any], String)] = [
      (["pushKeys": NSNull()], "pushKeys is required"),
      (["pushKeys": "x"], "pushKeys must be an object"),
      (["pushKeys": ["auth": Self.auth]], "pushKeys.p256dh"),
      (["pushKeys": ["p256dh": Self.p256dh]], "pushKeys.auth"),
      (["pushKeys": ["p256dh": 7, "auth": Self.auth]], "pushKeys.p256dh"),
      (["pushKeys": ["p256dh": String(Self.p256dh.dropLast(3)), "auth": Self.auth]], "65-byte"),
      (["pushKeys": ["p256dh": offCurveText, "auth": Self.auth]], "P-256"),
      (["pushKeys": ["p256dh": Self.p256dh, "auth": "AAAA"]], "16-byte"),
      (["pushKeys": ["p256dh": Self.p256dh, "auth": "not base64 at all!!"]], "pushKeys.auth"),
      (["pushToken": "http://push.example.org/x"], "https:// URL"),
      (["pushToken": "https://push.example.org/" + String(repeating: "a", count: 1010)], "1024"),
      (["pushToken": "https://push.example.org/a b"], "https:// URL"),
      (["pushToken": "not a url"], "https:// URL"),
      (["pushToken": "https://127.0.0.1:8443/push/1"], "private address"),
      (["pushToken": "https://localhost/push/1"], "private address"),
      (["platform": "webpushy"], #""webpush""#),
    ]
    for (change, mentions) in cases {
      for path in ["/v1/register", "/v1/heartbeat"] {
        var body = Self.subscription(change)
        if change["pushKeys"] is NSNull { body["pushKeys"] = nil }
        let reply = api.post(path, body)
        #expect(reply.status == 400, "\(change) \(reply.text)")
        #expect(reply.error?.contains(mentions) == true, "\(change): \(reply.error ?? reply.text)")
      }
    }
    #expect(try api.database.devices(of: "N0CALL-7").isEmpty)
    #expect(try api.database.station("N0CALL-7") == nil)
  }

  @Test func privateEndpointsOnlyWhenTheServerAllowsThem() throws {
    var config = APIConfig()
    config.allowPrivatePushEndpoints = true
    let api = try APIFixture(config: config)
    let reply = api.post("/v1/register", Self.subscription(["pushToken": "https://127.0.0.1:8443/push/1"]))
    #expect(reply.status == 200, "\(reply.text)")
  }

  // MARK: /v1/info

  @Test func infoWithoutWebPush() throws {
    let api = try APIFixture()
    for method in ["GET", "POST", "HEAD"] {
      let reply = Reply(
        api.handler.handle(
          APIRequest(method: method, path: "/v1/info", contentType: "", body: Array("anything".utf8))))
      #expect(reply.status == 200, "\(method)")
      #expect(
        reply.object?.keys == ["server", "version", "protocolVersion", "features", "maxWait"], "\(method)")
      #expect(reply["server"]?.stringValue == "aprs-cloud")
      // The version of the /v1 contract docs/protocol.md states ("Versions").
      #expect(reply["protocolVersion"]?.stringValue == "1.6")
      // Every build has station settings; nothing else is on in a bare configuration.
      #expect(reply["features"] == .array([.string("settings"), .string("claim")]))
      #expect(reply["maxWait"]?.intValue == 300)
    }
    let put = Reply(
      api.handler.handle(APIRequest(method: "PUT", path: "/v1/info", contentType: "", body: [])))
    #expect(put.status == 405)
    #expect(put.header("Allow") == "GET, HEAD, POST")
  }

  @Test func infoListsWebPushWithItsKeyOnceTheListenerMadeIt() throws {
    let key = SharedKey()
    var config = APIConfig()
    config.info.webPush = true
    config.info.longPoll = true
    config.info.vapidPublicKey = { key.value.withLock { $0 } }
    let api = try APIFixture(config: config)
    let before = Reply(
      api.handler.handle(APIRequest(method: "GET", path: "/v1/info", contentType: "", body: [])))
    #expect(before["features"] == .array([.string("longpoll"), .string("settings"), .string("claim")]))
    #expect(before["vapidPublicKey"] == nil)
    key.value.withLock { $0 = Self.vapidKey }
    let after = Reply(
      api.handler.handle(APIRequest(method: "GET", path: "/v1/info", contentType: "", body: [])))
    #expect(
      after.object?.keys == ["server", "version", "protocolVersion", "features", "maxWait", "vapidPublicKey"])
    #expect(
      after["features"]
        == .array([
          .string("longpoll"), .string("webpush"), .string("unifiedpush"), .string("settings"),
          .string("claim"),
        ]))
    #expect(after["vapidPublicKey"]?.stringValue == Self.vapidKey)
  }
}

/// The key the listener publishes, as the responder's closure reads it.
final class SharedKey: Sendable {
  let value = Mutex<String?>(nil)
}
