import JSON
import Platform

/// The server's VAPID identity (RFC 8292): one P-256 key pair, its contact `subject`, and the signed tokens.
///
/// Every push carries `Authorization: vapid t=<JWT>, k=<public key>`: the JWT is ES256 over the header
/// `{"typ":"JWT","alg":"ES256"}` and the claims `aud` (the endpoint's origin), `exp` (epoch seconds, at most
/// 24 h ahead: `tokenLifetimeSeconds`) and `sub` (the contact); `k` is the 65-byte public key as unpadded
/// base64url, the key the browser was given as `applicationServerKey`. One token per origin is kept and reused
/// until half its lifetime is gone, so a push service sees a new one at most every 6 hours.
///
/// Confined to the push thread, like the clients that share it.
final class VAPID {
  /// `exp` − now of a new token, seconds (RFC 8292 allows 24 h; half of that leaves room for clock skew).
  static let tokenLifetimeSeconds: Int64 = 12 * 3600
  /// A token is re-signed once less than this much of its lifetime is left, seconds.
  static let refreshBeforeExpirySeconds: Int64 = 6 * 3600
  /// Origins whose tokens are kept; past it the expired ones go (then all, if needed).
  static let maxCachedOrigins = 1024

  /// The contact `sub` (`mailto:…` or `https://…`).
  let subject: String
  /// The public key, 65 bytes (0x04 ‖ x ‖ y).
  let publicKey: [UInt8]
  /// `publicKey` as unpadded base64url: the `k` parameter, and what `/v1/info` shows as `vapidPublicKey`.
  let publicKeyText: String
  private let signer: SigningKey
  private let topicKey: [UInt8]
  private var tokens: [String: (token: String, expiresAt: Int64)] = [:]
  /// Tokens signed so far (for tests).
  private(set) var tokensSigned = 0

  /// The identity of a PEM P-256 private key.
  init(pem: [UInt8], subject: String) throws(PushError) {
    let key = try P256Key.privateKey(pem: pem)
    publicKey = try key.publicKey()
    publicKeyText = Base64URL.encode(publicKey)
    signer = try SigningKey(pem: pem, algorithm: .es256)
    self.subject = subject
    topicKey = ECECrypto.hmacSHA256(key: pem, Array("aprs-cloud web push topic".utf8))
  }

  /// The `Authorization` header value for a push to an endpoint of `origin` at `now` (epoch ms).
  func authorization(origin: String, now: Int64) throws(PushError) -> String {
    let seconds = now / 1000
    if let cached = tokens[origin], cached.expiresAt - seconds > Self.refreshBeforeExpirySeconds {
      return "vapid t=\(cached.token), k=\(publicKeyText)"
    }
    let expiresAt = seconds + Self.tokenLifetimeSeconds
    let token = try VAPID.token(audience: origin, subject: subject, expiresAt: expiresAt, key: signer)
    tokensSigned += 1
    if tokens.count >= Self.maxCachedOrigins {
      tokens = tokens.filter { $0.value.expiresAt - seconds > Self.refreshBeforeExpirySeconds }
      if tokens.count >= Self.maxCachedOrigins { tokens.removeAll() }
    }
    tokens[origin] = (token, expiresAt)
    return "vapid t=\(token), k=\(publicKeyText)"
  }

  /// The `Topic` of every push to `station` (RFC 8030 §5.4): 22 base64url characters, the same for every push of
  /// the station, so a newer push replaces one the push service still holds. A keyed hash (under a key derived
  /// from the VAPID private key): the push service learns no callsign from it.
  func topic(station: String) -> String {
    Base64URL.encode(ECECrypto.hmacSHA256(key: topicKey, Array(station.utf8)).prefix(16))
  }

  /// The signed VAPID JWT: header `{"typ":"JWT","alg":"ES256"}`, claims `aud`, `exp`, `sub`.
  static func token(audience: String, subject: String, expiresAt: Int64, key: SigningKey) throws(PushError)
    -> String
  {
    var header = JSONWriter(capacity: 32)
    header.beginObject()
    header.key("typ")
    header.string("JWT")
    header.key("alg")
    header.string("ES256")
    header.endObject()
    var claims = JSONWriter(capacity: 128)
    claims.beginObject()
    claims.key("aud")
    claims.string(audience)
    claims.key("exp")
    claims.int(expiresAt)
    claims.key("sub")
    claims.string(subject)
    claims.endObject()
    return try JWT.make(header: header.bytes, claims: claims.bytes, key: key)
  }
}
