import APRS
import JSON

/// The checks that register nothing: server information, health, transport, passcode, identity, error bodies.
extension ConformanceRun {
  /// The features `/v1/info` may list, in the order it lists them (docs/protocol.md "Server information").
  static let featureOrder = ["longpoll", "send", "webpush", "unifiedpush", "settings", "claim"]

  /// `GET /v1/info` (also `HEAD` and `POST`): `server`, `version`, `protocolVersion`, `features` in order,
  /// `maxWait`.
  func checkInfo() throws(CheckStop) -> String {
    let answer: ConformanceAnswer
    if let firstInfo {
      answer = firstInfo
    } else {
      answer = try send(ConformanceRequest(method: "GET", path: "/v1/info"))
    }
    if answer.status == 404 {
      features = []
      throw .skip("GET /v1/info is a 404: a 1.0 server, which offers no long poll and says no features")
    }
    let info = try expectSuccess(answer, "GET /v1/info")
    try require(
      info["server"]?.text == "aprs-cloud",
      "GET /v1/info: server is \(info["server"].map { "\($0)" } ?? "absent"), expected \"aprs-cloud\"")
    try require(info["version"]?.text != nil, "GET /v1/info: version is not a string")
    if let value = info["protocolVersion"] {
      let parts = (value.text ?? "").split(separator: ".", omittingEmptySubsequences: false)
      guard parts.count == 2, let major = Int(parts[0]), let minor = Int(parts[1]),
        parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) })
      else { throw .fail("GET /v1/info: protocolVersion \(value) is not \"MAJOR.MINOR\"") }
      try require(
        major == 1,
        "GET /v1/info: protocolVersion \(major).\(minor) under /v1 (a major version is a new prefix)")
      protocolVersion = (major, minor)
    }
    guard let list = info["features"]?.elements, list.allSatisfy({ $0.text != nil }) else {
      throw .fail("GET /v1/info: features is not an array of strings")
    }
    let names = list.compactMap(\.text)
    features = names
    let known = names.filter { Self.featureOrder.contains($0) }
    try require(
      known == Self.featureOrder.filter { known.contains($0) },
      "GET /v1/info: features \(names) are not in the documented order \(Self.featureOrder)")
    guard let maxWait = info["maxWait"]?.integer, (0...300).contains(maxWait) else {
      throw .fail("GET /v1/info: maxWait is not an integer from 0 to 300")
    }
    let head = try send(ConformanceRequest(method: "HEAD", path: "/v1/info"))
    try require(head.status == 200, "HEAD /v1/info: status \(head.status), expected 200")
    let viaPost = try post("info", [])
    _ = try expectSuccess(viaPost, "POST /v1/info")
    let version = info["protocolVersion"]?.text ?? "absent (before 1.5)"
    return "protocolVersion \(version), features [\(names.joined(separator: ", "))], maxWait \(maxWait)"
  }

  /// `GET /health` (also `HEAD`): a JSON object, 200 with `status`, or 503 with `error`.
  func checkHealth() throws(CheckStop) -> String {
    let answer = try send(ConformanceRequest(method: "GET", path: "/health"))
    switch answer.status {
    case 200:
      guard let object = answer.object, let status = object["status"]?.text else {
        throw .fail("GET /health: 200 without a JSON object with status (\(answer.bodyExcerpt))")
      }
      try require(
        ["ok", "degraded"].contains(status), "GET /health: status \"\(status)\", expected ok or degraded")
    case 503:
      try expectError(answer, status: 503, "GET /health")
    default:
      throw .fail("GET /health: status \(answer.status), expected 200 or 503")
    }
    let head = try send(ConformanceRequest(method: "HEAD", path: "/health"))
    try require(
      head.status == answer.status, "HEAD /health: status \(head.status), GET said \(answer.status)")
    return "GET and HEAD /health answer \(answer.status)"
  }

  /// JSON answers with `cache-control: no-store`, never a redirect; unknown members ignored, `null` as
  /// absent, a known field of the wrong type a 400 naming it; the cross-site refusal (1.3).
  func checkTransport() throws(CheckStop) -> String {
    let plain = try post("sync", identity(station))
    try require(
      !(300...399).contains(plain.status),
      "POST /v1/sync: redirected (\(plain.status)): an API call is never redirected")
    _ = try expectSuccess(plain, "POST /v1/sync")
    try expectJSONHeaders(plain, "POST /v1/sync")
    try expectJSONHeaders(try send(ConformanceRequest(method: "GET", path: "/v1/info")), "GET /v1/info")
    try expectJSONHeaders(
      try post("avatars", identity(station) + [("stations", .array([]))]), "POST /v1/avatars")
    // A failure's cache-control too; what its body is, the error-bodies check's.
    let missing = try post("conformance-no-such-endpoint", identity(station))
    try require(
      (missing.header("cache-control") ?? "").lowercased().contains("no-store"),
      "a \(missing.status) of POST /v1/conformance-no-such-endpoint: cache-control \(missing.header("cache-control") ?? "absent"), expected no-store"
    )
    let unknown = try post("sync", identity(station) + [("conformanceUnknownMember", .bool(true))])
    _ = try expectSuccess(unknown, "POST /v1/sync with a member the server does not know")
    let null = try post("sync", identity(station) + [("since", .null), ("want", .null)])
    _ = try expectSuccess(null, "POST /v1/sync with since:null (null counts as absent)")
    let wrongType = try post("sync", identity(station) + [("since", .string("0"))])
    try expectError(wrongType, status: 400, prefix: "since", "POST /v1/sync with since:\"0\" (a string)")
    var crossSite = "cross-site requests not checked: the server says protocolVersion below 1.3"
    if speaks(1, 3) || features?.contains("claim") == true {
      let foreign = try post("sync", identity(station), headers: ["Origin: https://conformance.invalid"])
      try expectError(foreign, status: 403, "POST /v1/sync with Origin: https://conformance.invalid")
      let fetchSite = try post("sync", identity(station), headers: ["Sec-Fetch-Site: cross-site"])
      try expectError(fetchSite, status: 403, "POST /v1/sync with Sec-Fetch-Site: cross-site")
      crossSite = "a foreign Origin and Sec-Fetch-Site: cross-site are 403"
    }
    return "JSON answers with cache-control no-store, no redirect; unknown members and null ignored;"
      + " a string since is a 400 naming since; \(crossSite)"
  }

  /// `auth` must be the base call's passcode (a string or a number); a wrong one is a 401.
  func checkPasscode() throws(CheckStop) -> String {
    let right = Passcode.compute(station.base)
    let wrong = (right + 1) & 0x7FFF
    var members = identity(station)
    members[2] = ("auth", .string(String(wrong)))
    let refused = try post("sync", members)
    try expectError(refused, status: 401, prefix: "auth", "POST /v1/sync with a wrong passcode")
    members[2] = ("auth", .int(Int64(right)))
    _ = try expectSuccess(try post("sync", members), "POST /v1/sync with auth as a JSON number")
    members = identity(station)
    members[0] = ("callsign", .string(station.base.lowercased()))
    _ = try expectSuccess(try post("sync", members), "POST /v1/sync with the callsign in lower case")
    return "passcode \(right) of \(station.base) accepted as a string and a number, lower-case call accepted,"
      + " \(wrong) is a 401"
  }

  /// A bad `callsign` or `ssid` is a 400 starting `callsign:`; `CALL-SSID` without `ssid`; the platforms.
  func checkIdentity() throws(CheckStop) -> String {
    let auth = ("auth", JSONValue.string(String(Passcode.compute(station.base))))
    let badCall = try post("sync", [("callsign", .string("N0 CALL!")), ("ssid", .int(0)), auth])
    try expectError(badCall, status: 400, prefix: "callsign:", "POST /v1/sync with callsign \"N0 CALL!\"")
    // "Identity" says a bad ssid starts `callsign:`, "Errors" that an out-of-range field starts with its own
    // name: either is taken.
    let badSSID = try post("sync", [("callsign", .string(station.base)), ("ssid", .int(16)), auth])
    let ssidError = try expectError(badSSID, status: 400, "POST /v1/sync with ssid 16")
    try require(
      ssidError.hasPrefix("callsign:") || ssidError.hasPrefix("ssid"),
      "POST /v1/sync with ssid 16: error \"\(ssidError)\" starts with neither callsign: nor ssid")
    let joined = try post("sync", [("callsign", .string(station.description)), auth])
    _ = try expectSuccess(joined, "POST /v1/sync with callsign \"\(station)\" and no ssid")
    let tokenAlone = try post("register", identity(station) + [("pushToken", .string(mainToken))])
    try expectError(tokenAlone, status: 400, "POST /v1/register with a pushToken and no platform")
    let badPlatform = try post(
      "register",
      identity(station) + [("platform", .string("conformance")), ("pushToken", .string(mainToken))])
    try expectError(badPlatform, status: 400, "POST /v1/register with platform \"conformance\"")
    return
      "a bad callsign is a 400 callsign:, ssid 16 a 400 (\(ssidError)), \(station) without ssid accepted, a token without"
      + " platform and an unknown platform are 400"
  }

  /// Every failure is a JSON object with `error`: 404, 405 with `Allow`, 400 for bodies that are not one
  /// JSON object or lack `callsign`.
  func checkErrorBodies() throws(CheckStop) -> String {
    try expectError(
      try post("conformance-no-such-endpoint", identity(station)), status: 404,
      "POST /v1/conformance-no-such-endpoint")
    let get = try send(ConformanceRequest(method: "GET", path: "/v1/sync"))
    try expectError(get, status: 405, "GET /v1/sync")
    try require(get.header("allow") != nil, "GET /v1/sync: a 405 without an Allow header")
    try expectError(
      try postRaw("sync", Array("not json".utf8)), status: 400, "POST /v1/sync with a body that is not JSON")
    try expectError(try postRaw("sync", Array("[]".utf8)), status: 400, "POST /v1/sync with a JSON array")
    let twice = "{\"callsign\":\"\(station.base)\",\"callsign\":\"\(station.base)\",\"auth\":\"0\"}"
    try expectError(
      try postRaw("sync", Array(twice.utf8)), status: 400, "POST /v1/sync with a member name twice")
    let noCall = try post("sync", [("auth", .string(String(Passcode.compute(station.base))))])
    try expectError(noCall, status: 400, prefix: "callsign", "POST /v1/sync without callsign")
    return "404, 405 (with Allow), and 400 for not JSON, an array, a duplicate member and a missing callsign:"
      + " each a JSON object with error"
  }
}
