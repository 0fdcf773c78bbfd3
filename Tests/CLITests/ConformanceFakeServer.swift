import APRS
import JSON

@testable import aprs_cloud

/// A scripted `/v1` server for the conformance runner's unit tests: a small model of docs/protocol.md (stations,
/// devices, avatars, the cursor, the limits the runner probes) answering ``ConformanceRequest``s in memory, with
/// one behaviour changed when `broken` says so. Time is the test's: `clock` ms, advanced only by a long poll.
final class ConformanceFakeServer: ConformanceTransport {
  /// One behaviour of the contract the fake gets wrong.
  enum Behaviour: CaseIterable {
    case infoFeaturesOutOfOrder, healthWithoutStatus, noStoreMissing, wrongPasscodeAccepted,
      badCallsignAccepted
    case plainTextNotFound, registerAdvancesCursor, syncKeysReordered, syncWallClock, heartbeatDoesNotRecreate
    case inboxKeysWithoutWant, avatarHashWrong, longPollNotHeld, retryAfterMissing,
      deviceUnregisterDropsStation
    case emptyTokenKeepsStation

    /// The check that must FAIL when this behaviour is broken.
    var check: ConformanceCheck {
      switch self {
      case .infoFeaturesOutOfOrder: .info
      case .healthWithoutStatus: .health
      case .noStoreMissing: .transport
      case .wrongPasscodeAccepted: .passcode
      case .badCallsignAccepted: .identity
      case .plainTextNotFound: .errorBodies
      case .registerAdvancesCursor: .register
      case .syncKeysReordered: .sync
      case .syncWallClock: .syncCursor
      case .heartbeatDoesNotRecreate: .heartbeat
      case .inboxKeysWithoutWant: .optInsOff
      case .avatarHashWrong: .avatars
      case .longPollNotHeld: .longPoll
      case .retryAfterMissing: .limitsRetryAfter
      case .deviceUnregisterDropsStation: .unregister
      case .emptyTokenKeepsStation: .unregisterEmptyToken
      }
    }
  }

  var broken: Behaviour?
  var features = ["longpoll", "send", "webpush", "unifiedpush", "settings", "claim"]
  /// Heartbeats of one device before a 429.
  var heartbeatBudget = 60
  /// The wall clock, ms; the newest stored timestamp (no message ever arrives here).
  var clock: Int64 = 1_796_000_000_000
  var newest: Int64 = 1_795_000_000_000
  /// Registered stations and their devices.
  var stations: [String: Set<String>] = [:]
  var avatars: [String: String] = [:]
  var heartbeats: [String: Int] = [:]
  /// Every request, in order.
  var requests: [ConformanceRequest] = []

  init(broken: Behaviour? = nil) { self.broken = broken }

  func exchange(_ request: ConformanceRequest) throws(ConformanceTransportError) -> ConformanceAnswer {
    requests.append(request)
    return answer(request)
  }

  // MARK: - Answers

  private func json(_ status: Int, _ members: [(String, JSONValue)], headers: [(String, String)] = [])
    -> ConformanceAnswer
  {
    var fields = [("Content-Type", "application/json")] + headers
    if broken != .noStoreMissing { fields.append(("Cache-Control", "no-store")) }
    return ConformanceAnswer(
      status: status, headers: fields.map { (name: $0.0, value: $0.1) }, body: conformanceBody(members))
  }

  private func error(_ status: Int, _ text: String, headers: [(String, String)] = []) -> ConformanceAnswer {
    json(status, [("error", .string(text))], headers: headers)
  }

  private func answer(_ request: ConformanceRequest) -> ConformanceAnswer {
    let posts = [
      "/v1/register", "/v1/heartbeat", "/v1/sync", "/v1/unregister", "/v1/avatars", "/v1/settings",
    ]
    switch (request.method, request.path) {
    case (_, "/v1/info"): return info()
    case ("GET", "/health"), ("HEAD", "/health"):
      return broken == .healthWithoutStatus
        ? json(200, [("listener", .object(JSONObject()))]) : json(200, [("status", .string("ok"))])
    case ("POST", let path) where posts.contains(path): break
    case (_, let path) where posts.contains(path):
      return error(405, "method not allowed; use POST", headers: [("Allow", "POST")])
    default:
      if broken == .plainTextNotFound {
        return ConformanceAnswer(
          status: 404,
          headers: [(name: "Content-Type", value: "text/html"), (name: "Cache-Control", value: "no-store")],
          body: Array("<h1>404</h1>".utf8))
      }
      return error(404, "no such endpoint: \(request.path)")
    }
    let body = request.body ?? []
    if body.count > 65_536 { return error(413, "request body is larger than 65536 bytes") }
    if request.headers.contains(where: {
      $0.hasPrefix("Origin:") || $0.hasPrefix("Sec-Fetch-Site: cross-site")
    }) {
      return error(403, "a cross-site request")
    }
    guard case .object(let object)? = try? JSONParser.parse(body) else {
      return error(400, "the body is not a JSON object")
    }
    return api(request.path, object)
  }

  private func info() -> ConformanceAnswer {
    let list = broken == .infoFeaturesOutOfOrder ? features.reversed() : features
    return json(
      200,
      [
        ("server", .string("aprs-cloud")), ("version", .string("0.1")), ("protocolVersion", .string("1.5")),
        ("features", .array(list.map { .string($0) })), ("maxWait", .int(300)),
      ])
  }

  /// A body's station, or the answer that refuses it.
  private enum Identified {
    case station(String)
    case refused(ConformanceAnswer)
  }

  /// The station address of a body, or the 400/401 it earns.
  private func station(_ body: JSONObject) -> Identified {
    guard let call = body["callsign"]?.text else { return .refused(error(400, "callsign: missing")) }
    var ssid = 0
    if let value = body["ssid"] {
      guard let number = value.integer, (0...15).contains(number) || broken == .badCallsignAccepted else {
        return .refused(error(400, "callsign: the ssid must be 0-15"))
      }
      ssid = Int(number)
    }
    let address: StationAddress
    do {
      address = try StationAddress(base: call, ssid: ssid)
    } catch {
      if broken == .badCallsignAccepted { return .station(call) }
      return .refused(self.error(400, "callsign: \(error)"))
    }
    let auth: Int64? = body["auth"]?.integer ?? body["auth"]?.text.flatMap { Int64($0) }
    if auth != Int64(Passcode.compute(address.base)) && broken != .wrongPasscodeAccepted {
      return .refused(error(401, "auth does not match the callsign's APRS-IS passcode"))
    }
    return .station(address.description)
  }

  private func api(_ path: String, _ body: JSONObject) -> ConformanceAnswer {
    let address: String
    switch station(body) {
    case .station(let found): address = found
    case .refused(let refusal): return refusal
    }
    if let since = body["since"], since != .null, since.integer == nil {
      return error(400, "since: must be an integer")
    }
    if let want = body["want"]?.elements, want.count > 16 { return error(400, "want: at most 16 names") }
    switch path {
    case "/v1/register", "/v1/heartbeat": return refresh(address, body, registration: path == "/v1/register")
    case "/v1/sync": return sync(address, body)
    case "/v1/unregister":
      let token = body["pushToken"]?.text ?? ""
      if token.isEmpty ? broken != .emptyTokenKeepsStation : broken == .deviceUnregisterDropsStation {
        stations[address] = nil
        avatars[address] = nil
      } else if !token.isEmpty {
        stations[address]?.remove(token)
      }
      return json(200, [])
    case "/v1/avatars":
      guard let list = body["stations"]?.elements, list.count <= 50 else {
        return error(400, "stations: at most 50")
      }
      var members: [(key: String, value: JSONValue)] = []
      for case .string(let name) in list
      where avatars[name] != nil && !members.contains(where: { $0.key == name }) {
        let icon = String(avatars[name]!.dropFirst(5))
        members.append(
          (
            name,
            .object(
              JSONObject([
                (key: "icon", value: .string(icon)), (key: "image", value: .null),
                (key: "hash", value: .string(avatars[name]!)),
              ]))
          ))
      }
      return json(200, [("avatars", .object(JSONObject(members)))])
    default:  // /v1/settings
      return stations[address] == nil
        ? error(404, "\(address) is not registered; register it first")
        : error(
          403,
          "reading or changing settings needs a claimed station: claim \(address) first with POST /v1/claim")
    }
  }

  private func refresh(_ address: String, _ body: JSONObject, registration: Bool) -> ConformanceAnswer {
    let token = body["pushToken"]?.text ?? ""
    if !token.isEmpty {
      guard let platform = body["platform"]?.text else {
        return error(400, "platform: needed with a pushToken")
      }
      guard ["android", "ios", "webpush", "unifiedpush"].contains(platform) else {
        return error(400, "platform: unknown")
      }
    }
    if !registration {
      guard stations[address] != nil || broken != .heartbeatDoesNotRecreate else {
        return json(200, [("avatarHash", .string(""))])
      }
      let key = address + ":" + token
      heartbeats[key, default: 0] += 1
      if heartbeats[key]! > heartbeatBudget {
        let retry: [(String, String)] = broken == .retryAfterMissing ? [] : [("Retry-After", "3540")]
        return error(429, "too many heartbeats; retry in 3540 s", headers: retry)
      }
    }
    stations[address, default: []].formUnion(token.isEmpty ? [] : [token])
    var avatarError: String?
    if body["avatarUpdate"] == .bool(true) {
      let icon = body["avatarIcon"]?.text
      if let icon,
        icon.isEmpty || !icon.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" || $0 == "_" })
      {
        avatarError = "avatarIcon: 1-32 characters [a-z0-9_-]"
      } else if let icon {
        avatars[address] = broken == .avatarHashWrong ? "icon:" + icon + "x" : "icon:" + icon
      } else {
        avatars[address] = nil
      }
    }
    var members: [(String, JSONValue)] = [("avatarHash", .string(avatars[address] ?? ""))]
    if let avatarError { members.append(("avatarError", .string(avatarError))) }
    guard registration else { return json(200, members) }
    let since = body["since"]?.integer ?? 0
    if body["wantHistory"] == .bool(true) {
      return json(
        200,
        [("messages", .array([])), ("serverTime", .int(max(since, newest)))] + members + [
          ("avatars", .object(JSONObject()))
        ])
    }
    let echoed = broken == .registerAdvancesCursor ? max(since, newest) + 1 : since
    return json(200, [("serverTime", .int(echoed))] + members + [("avatars", .object(JSONObject()))])
  }

  private func sync(_ address: String, _ body: JSONObject) -> ConformanceAnswer {
    let since = body["since"]?.integer ?? 0
    if let wait = body["wait"] {
      guard let seconds = wait.integer, (0...300).contains(seconds) else {
        return error(400, "wait: 0-300 s")
      }
    }
    let held = broken == .longPollNotHeld ? 0 : Int(body["wait"]?.integer ?? 0) * 1000
    clock += Int64(held)
    let serverTime = broken == .syncWallClock ? clock : max(since, newest)
    var members: [(String, JSONValue)] = [
      ("messages", .array([])), ("serverTime", .int(serverTime)), ("avatars", .object(JSONObject())),
    ]
    if broken == .syncKeysReordered { members.swapAt(0, 1) }
    let wants = (body["want"]?.elements ?? []).compactMap(\.text)
    if wants.contains("inbox") || broken == .inboxKeysWithoutWant {
      members += [
        ("more", .bool(false)), ("dropped", .int(0)), ("oldestTimestamp", .null),
        ("read", .object(JSONObject())),
      ]
    }
    var answer = json(200, members)
    answer.elapsedMs = held
    return answer
  }
}
