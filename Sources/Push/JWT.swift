import JSON
import Platform

/// JSON Web Tokens for the two providers (RFC 7519, compact JWS).
enum JWT {
  /// The OAuth scope FCM sends need.
  static let fcmScope = "https://www.googleapis.com/auth/firebase.messaging"
  /// The longest lifetime Google accepts for the assertion, seconds.
  static let assertionLifetime: Int64 = 3600

  /// `base64url(header).base64url(claims).base64url(signature)`.
  static func make(header: [UInt8], claims: [UInt8], key: SigningKey) throws(PushError) -> String {
    let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
    let signature = try key.sign(Array(signingInput.utf8))
    return signingInput + "." + Base64URL.encode(signature)
  }

  /// The RS256 assertion a service account exchanges at `token_uri` for an access token:
  /// header with `kid`; claims iss, scope, aud = token_uri, iat, exp = iat + 3600.
  static func serviceAccountAssertion(
    account: ServiceAccount, key: SigningKey, issuedAt: Int64
  ) throws(PushError) -> String {
    var header = JSONWriter(capacity: 96)
    header.beginObject()
    header.key("alg")
    header.string("RS256")
    header.key("typ")
    header.string("JWT")
    header.key("kid")
    header.string(account.privateKeyID)
    header.endObject()
    var claims = JSONWriter(capacity: 256)
    claims.beginObject()
    claims.key("iss")
    claims.string(account.clientEmail)
    claims.key("scope")
    claims.string(fcmScope)
    claims.key("aud")
    claims.string(account.tokenURI)
    claims.key("iat")
    claims.int(issuedAt)
    claims.key("exp")
    claims.int(issuedAt + assertionLifetime)
    claims.endObject()
    return try make(header: header.bytes, claims: claims.bytes, key: key)
  }

  /// The ES256 provider token for APNs: header alg + kid, claims iss (team id) + iat only.
  static func apnsProviderToken(keyID: String, teamID: String, key: SigningKey, issuedAt: Int64)
    throws(PushError) -> String
  {
    var header = JSONWriter(capacity: 48)
    header.beginObject()
    header.key("alg")
    header.string("ES256")
    header.key("kid")
    header.string(keyID)
    header.endObject()
    var claims = JSONWriter(capacity: 48)
    claims.beginObject()
    claims.key("iss")
    claims.string(teamID)
    claims.key("iat")
    claims.int(issuedAt)
    claims.endObject()
    return try make(header: header.bytes, claims: claims.bytes, key: key)
  }
}

/// The fields of a Firebase service-account JSON file the sender uses.
struct ServiceAccount: Sendable, Equatable {
  static let defaultTokenURI = "https://oauth2.googleapis.com/token"

  var projectID: String
  var privateKeyID: String
  var privateKeyPEM: String
  var clientEmail: String
  var tokenURI: String

  /// Parses the file's bytes; the error names the missing or wrong field.
  init(json: [UInt8]) throws(PushError) {
    let parsed: JSONValue
    do {
      parsed = try JSONParser.parse(json)
    } catch {
      throw PushError("not valid JSON (\(error))")
    }
    guard case .object(let root) = parsed else { throw PushError("not a JSON object") }
    func field(_ name: String, required: Bool = true) throws(PushError) -> String? {
      guard let value = root[name] else {
        if required { throw PushError("missing \"\(name)\"") }
        return nil
      }
      guard case .string(let text) = value, !text.isEmpty else {
        throw PushError("\"\(name)\" is not a non-empty string")
      }
      return text
    }
    if let type = try field("type", required: false), type != "service_account" {
      throw PushError("\"type\" is \"\(type)\", expected \"service_account\"")
    }
    projectID = try field("project_id") ?? ""
    privateKeyID = try field("private_key_id") ?? ""
    privateKeyPEM = try field("private_key") ?? ""
    clientEmail = try field("client_email") ?? ""
    tokenURI = try field("token_uri", required: false) ?? ServiceAccount.defaultTokenURI
    guard tokenURI.hasPrefix("https://") else {
      throw PushError("\"token_uri\" is not an https:// URL")
    }
    guard projectID.utf8.allSatisfy({ $0 > 0x20 && $0 != UInt8(ascii: "/") && $0 < 0x7F }) else {
      throw PushError("\"project_id\" has characters a project id cannot have")
    }
  }
}
