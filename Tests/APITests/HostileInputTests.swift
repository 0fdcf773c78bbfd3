import API
import Foundation
import JSON
import TestSupport
import Testing

/// Bad input is a feature: every malformed body gets a 400 (or 401) with a JSON `error` naming
/// what is wrong, nothing is written, and nothing crashes.
@Suite struct HostileInputTests {
  static let cases: [(body: String, status: Int, mentions: String)] = [
    ("", 400, "empty"),
    ("   ", 400, "empty"),
    ("null", 400, "JSON object"),
    ("[]", 400, "JSON object"),
    (#""text""#, 400, "JSON object"),
    ("{", 400, "JSON"),
    (#"{"callsign":"N0CALL","auth":"13023"} trailing"#, 400, "after the JSON"),
    (#"{"callsign":"N0CALL","callsign":"W5AGO","auth":"13023"}"#, 400, "more than once"),
    (#"{"auth":"13023"}"#, 400, "callsign is required"),
    (#"{"callsign":7,"auth":"13023"}"#, 400, "callsign must be a string"),
    (#"{"callsign":"","auth":"13023"}"#, 400, "callsign"),
    (#"{"callsign":"N0CALL!","auth":"13023"}"#, 400, "callsign"),
    (#"{"callsign":"TOOLONGCALL","auth":"13023"}"#, 400, "callsign"),
    (#"{"callsign":"N0CALL","ssid":16,"auth":"13023"}"#, 400, "ssid"),
    (#"{"callsign":"N0CALL","ssid":-1,"auth":"13023"}"#, 400, "ssid"),
    (#"{"callsign":"N0CALL","ssid":"7","auth":"13023"}"#, 400, "ssid must be an integer"),
    (#"{"callsign":"N0CALL","ssid":7.5,"auth":"13023"}"#, 400, "ssid"),
    (#"{"callsign":"N0CALL","ssid":1e400,"auth":"13023"}"#, 400, "ssid"),
    (#"{"callsign":"N0CALL"}"#, 400, "auth is required"),
    (#"{"callsign":"N0CALL","auth":true}"#, 400, "auth must be"),
    (#"{"callsign":"N0CALL","auth":"abc"}"#, 400, "auth must be"),
    (#"{"callsign":"N0CALL","auth":"99999999999999999999"}"#, 400, "auth must be"),
    (#"{"callsign":"N0CALL","auth":"13024"}"#, 401, "passcode"),
    (#"{"callsign":"N0CALL","auth":13024}"#, 401, "passcode"),
    (#"{"callsign":"N0CALL","auth":"13023","since":-5}"#, 400, "since"),
    (#"{"callsign":"N0CALL","auth":"13023","since":"0"}"#, 400, "since must be an integer"),
    (#"{"callsign":"N0CALL","auth":"13023","since":99999999999999999999999}"#, 400, "since"),
    (#"{"callsign":"N0CALL","auth":"13023","platform":"windows","pushToken":"abcdefgh"}"#, 400, "platform"),
    (#"{"callsign":"N0CALL","auth":"13023","pushToken":"abcdefgh12"}"#, 400, "platform is required"),
    (#"{"callsign":"N0CALL","auth":"13023","platform":"ios","pushToken":"not-hex-token-zz"}"#, 400, "hex"),
    (
      #"{"callsign":"N0CALL","auth":"13023","platform":"android","pushToken":"bad token with spaces"}"#, 400,
      "FCM"
    ),
    (#"{"callsign":"N0CALL","auth":"13023","pushToken":["x"]}"#, 400, "pushToken must be a string"),
    (#"{"callsign":"N0CALL","auth":"13023","ackMessages":"yes"}"#, 400, "ackMessages"),
    (#"{"callsign":"N0CALL","auth":"13023","wantHistory":1}"#, 400, "wantHistory"),
    (#"{"callsign":"N0CALL","auth":"13023","avatarUpdate":"true"}"#, 400, "avatarUpdate"),
    (#"{"callsign":"N0CALL","auth":"13023","avatarUpdate":true,"avatarIcon":5}"#, 400, "avatarIcon"),
    ("{\"callsign\":\"N0CALL\u{0001}\",\"auth\":\"13023\"}", 400, "control character"),
    (#"{"callsign":"N0C\u0000LL","auth":"13023"}"#, 400, "callsign"),
    (String(repeating: "[", count: 5000), 400, "deeper"),
    (
      #"{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":{"l":{"m":{"n":{"o":{"p":{"q":1}}}}}}}}}}}}}}}}}"#,
      400, "deeper"
    ),
  ]

  @Test func everyMalformedBodyIsAClearErrorAndWritesNothing() throws {
    let api = try APIFixture()
    for endpoint in ["/v1/register", "/v1/heartbeat", "/v1/sync", "/v1/unregister"] {
      for testCase in Self.cases {
        // Skip cases that only break a field this endpoint does not read.
        if endpoint != "/v1/register" && testCase.mentions.hasPrefix("ackMessages") { continue }
        if endpoint != "/v1/register" && testCase.mentions.hasPrefix("wantHistory") { continue }
        if endpoint == "/v1/sync" || endpoint == "/v1/unregister" {
          if ["platform", "hex", "FCM", "avatar", "platform is required"].contains(
            where: testCase.mentions.hasPrefix)
          {
            continue
          }
        }
        if endpoint == "/v1/unregister" && testCase.mentions.hasPrefix("since") { continue }
        if endpoint == "/v1/sync" && testCase.mentions.hasPrefix("pushToken") { continue }
        if endpoint == "/v1/heartbeat" && testCase.mentions.hasPrefix("since") { continue }
        let reply = api.post(endpoint, testCase.body)
        #expect(reply.status == testCase.status, "\(endpoint) \(testCase.body.prefix(80)): \(reply.text)")
        #expect(reply.object?.keys == ["error"], "\(endpoint) \(testCase.body.prefix(80))")
        #expect(
          reply.error?.contains(testCase.mentions) == true,
          "\(endpoint) \(testCase.body.prefix(80)) → \(reply.error ?? "nil")")
      }
    }
    #expect(try api.database.station("N0CALL") == nil)
    #expect(try api.database.integrityCheck() == "ok")
  }

  @Test func invalidUTF8IsA400() throws {
    let api = try APIFixture()
    var body = Array(#"{"callsign":"N0CALL","auth":"13023","platform":"android","pushToken":"ab"#.utf8)
    body += [0xFF, 0xFE]
    body += Array(#"cdefgh"}"#.utf8)
    let reply = Reply(api.handler.handle(APIRequest(method: "POST", path: "/v1/register", body: body)))
    #expect(reply.status == 400)
    #expect(reply.error?.contains("UTF-8") == true)
  }

  /// A few thousand random mutations of valid bodies: never a 5xx, always JSON, `error` on every
  /// failure, and the database intact afterwards.
  @Test func randomMutationsNeverCauseA5xx() throws {
    let api = try APIFixture()
    let seeds: [(String, String)] = [
      (
        "/v1/register",
        #"{"callsign":"n0call","ssid":7,"platform":"android","pushToken":"fcm:APA91b-x","ackMessages":false,"wantHistory":true,"since":0,"auth":"13023","avatarHash":"","avatarUpdate":true,"avatarIcon":"radio","avatarImage":null}"#
      ),
      (
        "/v1/heartbeat",
        #"{"callsign":"N0CALL","ssid":7,"platform":"ios","pushToken":"abababababababababababababababab","auth":"13023"}"#
      ),
      ("/v1/sync", #"{"callsign":"N0CALL","ssid":7,"since":1800000000000,"auth":"13023"}"#),
      ("/v1/unregister", #"{"callsign":"N0CALL","ssid":7,"auth":"13023","pushToken":"fcm:APA91b-x"}"#),
      ("/v1/avatars", #"{"callsign":"N0CALL","ssid":7,"auth":13023,"stations":["W5AGO","N0CALL-7"]}"#),
    ]
    var random = SplitMix64(seed: 20261129)
    let alphabet = Array(#"{}[]":,\-0123456789.eEtrufalsnN0CALL "#.utf8) + [0x00, 0x7F, 0x80, 0xC3, 0xFF]
    var statuses: [Int: Int] = [:]
    for round in 0..<4000 {
      let (path, seed) = seeds[round % seeds.count]
      var bytes = Array(seed.utf8)
      for _ in 0..<(1 + Int(random.next() % 4)) {
        if bytes.isEmpty { break }
        let position = Int(random.next() % UInt64(bytes.count))
        switch random.next() % 4 {
        case 0: bytes[position] = alphabet[Int(random.next() % UInt64(alphabet.count))]
        case 1: bytes.insert(alphabet[Int(random.next() % UInt64(alphabet.count))], at: position)
        case 2: if bytes.count > 1 { bytes.remove(at: position) }
        default: bytes = Array(bytes[..<position])
        }
      }
      let response = api.handler.handle(APIRequest(method: "POST", path: path, body: bytes))
      let reply = Reply(response)
      statuses[reply.status, default: 0] += 1
      #expect(reply.status < 500, "\(path) \(String(decoding: bytes, as: UTF8.self)): \(reply.text)")
      #expect(reply.json != nil)
      if reply.status != 200 { #expect(reply.error != nil) }
    }
    #expect(statuses[400, default: 0] > 1000)
    #expect(try api.database.integrityCheck() == "ok")
  }
}
