import API
import Foundation
import Store
import Testing

/// What the claim-proof suites share: N0CALL-7's identity, the code vectors (HMAC-SHA256 from Python's `hmac`, an
/// implementation independent of ours), a station the app has used for half an hour, and a stand-in for the push
/// sender's round of codes.
enum ClaimFixtures {
  nonisolated(unsafe) static let identity: [String: Any] = ["callsign": "N0CALL", "ssid": 7, "auth": "13023"]
  /// HMAC-SHA256(key: salt, code), lower-case hex, from Python's `hmac`.
  static let vectors: [(salt: String, code: String, hash: String)] = [
    (
      "00112233445566778899aabbccddeeff", "123456",
      "30f7a6688fb48259721b66148b60eed7aa03599f64109d77bea44cb06d4c8251"
    ),
    (
      "ffeeddccbbaa99887766554433221100", "654321",
      "6fbdeb2b4a7d31896e142daeb180c9e38b547e8d69a5408e90e11fd1a804c8d9"
    ),
  ]
  static let minute: Int64 = 60_000
  /// The real user's address, and a stranger's.
  static let victim = "198.51.100.7"
  static let attacker = "203.0.113.9"

  static func body(_ extra: [String: Any] = [:]) -> [String: Any] { identity.merging(extra) { $1 } }

  static func bearer(_ key: String) -> String { "Bearer \(key)" }

  /// The app registers N0CALL-7 with an FCM token (`app-token`), keyless, and uses it for half an hour: the
  /// station is in use.
  static func stationInUse() throws -> APIFixture {
    let api = try APIFixture()
    api.clock.advance(ms: 1000)
    let app = api.post(
      "/v1/register", registerBody(["platform": "android", "pushToken": "app-token", "wantHistory": false]),
      authorization: nil, remoteAddress: victim)
    #expect(app.status == 200, "\(app.text)")
    api.clock.advance(ms: 30 * minute)
    return api
  }

  /// Stands in for the push sender: a round of the request of `keyHash` with one code per `(token, vector)`.
  static func pushRound(_ api: APIFixture, keyHash: String, codes: [(token: String, vector: Int)]) throws {
    let request = try #require(try api.database.claimRequest("N0CALL-7", keyHash: keyHash))
    let devices = try api.database.devices(of: "N0CALL-7")
    let stored = try codes.map { code in
      let device = try #require(devices.first { $0.token == code.token })
      let vector = vectors[code.vector]
      return ClaimCode(
        token: code.token, registeredAt: device.registeredAt, salt: vector.salt, codeHash: vector.hash)
    }
    #expect(
      try api.database.beginClaimCodes(
        request, codes: stored, expiresAt: api.clock.now + ClaimRequest.codeLifetimeMs))
  }
}
