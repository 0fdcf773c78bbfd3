import APRS
import JSON

/// The black-box conformance run of `/v1` against one server (`aprs-cloud conformance`): every check of
/// ``ConformanceCheck`` in order, over a ``ConformanceTransport`` only, as a public client (no database, no
/// operator access). It registers at most two stations of its own (``station`` and ``spare``), each with
/// one device, and cleans up after itself: the devices it registered always, a whole station only when the
/// run created it (a station that existed before keeps everything but the run's device).
final class ConformanceRun {
  /// The default station: a base call without a digit (no licensed amateur has it) and SSID 15.
  static let defaultStation = "CONFRM-15"
  /// A cursor far ahead of anything stored: ten years (ms) past the later of the first `serverTime`
  /// and 2023-11-14.
  static let futureOffsetMs: Int64 = 315_360_000_000
  /// The most heartbeats the rate-limit probe sends (the documented budget is 60 an hour per device).
  static let rateProbeLimit = 64

  let transport: any ConformanceTransport
  /// The main station: registered, synced, avatars, unregistered.
  let station: StationAddress
  /// A second station of the same call: a sync of a station not registered, a heartbeat that creates it,
  /// the rate limit.
  let spare: StationAddress
  /// Makes the run's push tokens unique (hex).
  let runID: String

  /// The first answer of `GET /v1/info` (the run's first request, which proves the server answers).
  var firstInfo: ConformanceAnswer?
  /// `/v1/info`'s features and version, once the info check read them.
  var features: [String]?
  var protocolVersion: (major: Int, minor: Int)?
  /// Whether each station was registered before the run (nil: not known, the server has no probe).
  var existedBefore: [StationAddress: Bool] = [:]
  /// The stations the run created (registered when they were not).
  var created: Set<StationAddress> = []
  /// The devices the run registered and has not unregistered yet.
  var devices: [(station: StationAddress, token: String)] = []
  /// Notes for the operator: pre-existing stations, what cleanup did.
  var notes: [String] = []
  /// The results so far.
  private(set) var results: [CheckResult] = []

  init(transport: any ConformanceTransport, station: StationAddress, runID: String) {
    self.transport = transport
    self.station = station
    self.runID = runID
    spare = Self.spare(for: station)
  }

  /// Another SSID of `station`'s call that forms a valid address: the SSID below it first.
  static func spare(for station: StationAddress) -> StationAddress {
    let candidates = [(station.ssid + 15) % 16] + Array(1...9)
    for ssid in candidates where ssid != station.ssid {
      if let address = try? StationAddress(base: station.base, ssid: ssid) { return address }
    }
    return station
  }

  /// The push tokens of the run: FCM-shaped strings no provider knows (nothing is pushed to them: no message
  /// is addressed to the run's stations).
  var mainToken: String { "conformance-\(runID)-main" }
  var spareToken: String { "conformance-\(runID)-spare" }

  /// Runs every check and cleans up.
  /// - Throws: ``ConformanceTransportError`` when the server cannot be reached at all (`GET /v1/info` got no
  ///   answer): nothing was registered.
  func run() throws(ConformanceTransportError) -> [CheckResult] {
    firstInfo = try transport.exchange(ConformanceRequest(method: "GET", path: "/v1/info"))
    for check in ConformanceCheck.allCases {
      let result: CheckResult
      do throws(CheckStop) {
        let reason = try perform(check)
        result = CheckResult(name: check.rawValue, section: check.section, status: .pass, reason: reason)
      } catch {
        result = CheckResult(
          name: check.rawValue, section: check.section, status: error.status, reason: error.reason)
      }
      results.append(result)
      if check == .errorBodies { probeStations() }
    }
    cleanUp()
    return results
  }

  private func perform(_ check: ConformanceCheck) throws(CheckStop) -> String {
    switch check {
    case .info: try checkInfo()
    case .health: try checkHealth()
    case .transport: try checkTransport()
    case .passcode: try checkPasscode()
    case .identity: try checkIdentity()
    case .errorBodies: try checkErrorBodies()
    case .register: try checkRegister()
    case .sync: try checkSync()
    case .syncCursor: try checkSyncCursor()
    case .heartbeat: try checkHeartbeat()
    case .optInsOff: try checkOptInsOff()
    case .avatars: try checkAvatars()
    case .longPoll: try checkLongPoll()
    case .limitsRetryAfter: try checkLimits()
    case .unregister: try checkUnregister()
    case .unregisterEmptyToken: try checkUnregisterEmptyToken()
    }
  }

  // MARK: - Requests

  /// The identity members of `address` (docs/protocol.md "Identity"), `auth` as the app sends it: a string.
  func identity(_ address: StationAddress) -> [(String, JSONValue)] {
    [
      ("callsign", .string(address.base)), ("ssid", .int(Int64(address.ssid))),
      ("auth", .string(String(Passcode.compute(address.base)))),
    ]
  }

  /// Sends one request; no answer at all is a FAIL naming it.
  func send(_ request: ConformanceRequest) throws(CheckStop) -> ConformanceAnswer {
    do throws(ConformanceTransportError) {
      return try transport.exchange(request)
    } catch {
      throw .fail("\(request.method) \(request.path): no answer (\(error))")
    }
  }

  /// `POST /v1/<name>` with a JSON body.
  func post(
    _ name: String, _ members: [(String, JSONValue)], headers: [String] = []
  ) throws(CheckStop) -> ConformanceAnswer {
    try send(
      ConformanceRequest(
        method: "POST", path: "/v1/" + name, headers: ["Content-Type: application/json"] + headers,
        body: conformanceBody(members)))
  }

  /// `POST /v1/<name>` with raw bytes as the body.
  func postRaw(_ name: String, _ body: [UInt8]) throws(CheckStop) -> ConformanceAnswer {
    try send(
      ConformanceRequest(
        method: "POST", path: "/v1/" + name, headers: ["Content-Type: application/json"], body: body))
  }

  /// The answer must be a 200 with a JSON object without `error`, `application/json`: the object. (Its
  /// `cache-control` is the transport check's.)
  func expectSuccess(_ answer: ConformanceAnswer, _ what: String) throws(CheckStop) -> JSONObject {
    guard answer.status == 200 else {
      throw .fail("\(what): status \(answer.status), expected 200 (\(answer.bodyExcerpt))")
    }
    guard let object = answer.object else {
      throw .fail("\(what): the answer is not a JSON object (\(answer.bodyExcerpt))")
    }
    if let error = object["error"], error != .null {
      throw .fail("\(what): 200 with an error key (\(answer.bodyExcerpt))")
    }
    guard (answer.header("content-type") ?? "").lowercased().hasPrefix("application/json") else {
      throw .fail(
        "\(what): content-type \(answer.header("content-type") ?? "absent"), expected application/json")
    }
    return object
  }

  /// The answer must be a failure of `status`: a JSON object whose `error` is a non-empty string (starting
  /// with `prefix` when given); `application/json`.
  @discardableResult
  func expectError(
    _ answer: ConformanceAnswer, status: Int, prefix: String? = nil, _ what: String
  ) throws(CheckStop) -> String {
    guard answer.status == status else {
      throw .fail("\(what): status \(answer.status), expected \(status) (\(answer.bodyExcerpt))")
    }
    guard let object = answer.object else {
      throw .fail("\(what): the \(status) body is not a JSON object (\(answer.bodyExcerpt))")
    }
    guard let error = object["error"]?.text, !error.isEmpty else {
      throw .fail("\(what): the \(status) body has no error sentence (\(answer.bodyExcerpt))")
    }
    if let prefix, !error.hasPrefix(prefix) {
      throw .fail("\(what): error \"\(error)\" does not start with \"\(prefix)\"")
    }
    guard (answer.header("content-type") ?? "").lowercased().hasPrefix("application/json") else {
      throw .fail(
        "\(what): content-type \(answer.header("content-type") ?? "absent"), expected application/json")
    }
    return error
  }

  /// `application/json` and `cache-control: no-store` (docs/protocol.md "Transport").
  func expectJSONHeaders(_ answer: ConformanceAnswer, _ what: String) throws(CheckStop) {
    guard (answer.header("content-type") ?? "").lowercased().hasPrefix("application/json") else {
      throw .fail(
        "\(what): content-type \(answer.header("content-type") ?? "absent"), expected application/json")
    }
    guard (answer.header("cache-control") ?? "").lowercased().contains("no-store") else {
      throw .fail("\(what): cache-control \(answer.header("cache-control") ?? "absent"), expected no-store")
    }
  }

  /// `keys` must be exactly `expected`, in order, where `optional` keys may also appear (at their place).
  func expectKeys(
    _ object: JSONObject, _ expected: [String], optional: Set<String> = [], _ what: String
  ) throws(CheckStop) {
    let keys = object.keys.filter { !optional.contains($0) }
    guard keys == expected else {
      throw .fail("\(what): keys \(object.keys), expected \(expected) in this order")
    }
  }

  func require(_ condition: Bool, _ reason: @autoclosure () -> String) throws(CheckStop) {
    if !condition { throw .fail(reason()) }
  }

  /// Whether `address` is registered, read without changing anything: `/v1/settings` with the passcode is a
  /// 404 for a station that is not registered and a 403 for one that is (unclaimed: claim it first; claimed:
  /// the key). Nil when the server answers neither (no `/v1/settings`).
  func isRegistered(_ address: StationAddress) -> Bool? {
    guard
      let answer = try? transport.exchange(
        ConformanceRequest(
          method: "POST", path: "/v1/settings", headers: ["Content-Type: application/json"],
          body: conformanceBody(identity(address))))
    else { return nil }
    switch answer.status {
    case 404: return answer.object?["error"]?.text?.contains("not registered") == true ? false : nil
    case 403, 200: return true
    default: return nil
    }
  }

  /// Before anything registers: whether the run's stations exist already.
  private func probeStations() {
    for address in [station, spare] {
      let known = isRegistered(address)
      existedBefore[address] = known
      if known == true {
        notes.append(
          "\(address) was registered before the run: the run changes nothing of it but registers and then"
            + " unregisters one device of its own")
      } else if known == nil {
        notes.append(
          "cannot tell whether \(address) existed before the run (no /v1/settings to ask): it is treated as"
            + " existing, so only the run's own device is unregistered")
      }
    }
  }

  /// Whether the run may wipe `address` whole: it did not exist before and the run created it.
  func ownsWhole(_ address: StationAddress) -> Bool {
    existedBefore[address] == false && created.contains(address)
  }

  /// Notes a register or heartbeat of `token` on `address` that succeeded.
  func registered(_ address: StationAddress, token: String?) {
    if existedBefore[address] == false { created.insert(address) }
    if let token, !token.isEmpty, !devices.contains(where: { $0.station == address && $0.token == token }) {
      devices.append((address, token))
    }
  }

  /// Notes that `token` of `address` was unregistered (nil: the whole station).
  func unregistered(_ address: StationAddress, token: String?) {
    devices.removeAll { $0.station == address && (token == nil || $0.token == token) }
    if token == nil { created.remove(address) }
  }

  /// Unregisters what the checks left: every device the run registered, then each station it created.
  private func cleanUp() {
    for device in devices {
      let answer = try? post("unregister", identity(device.station) + [("pushToken", .string(device.token))])
      notes.append(
        answer?.status == 200
          ? "cleanup: unregistered the run's device of \(device.station)"
          : "cleanup: could not unregister the run's device of \(device.station) (status \(answer.map { String($0.status) } ?? "none"))"
      )
    }
    devices.removeAll()
    for address in created.sorted(by: { $0.description < $1.description })
    where existedBefore[address] == false {
      let answer = try? post("unregister", identity(address) + [("pushToken", .string(""))])
      notes.append(
        answer?.status == 200
          ? "cleanup: unregistered \(address), which the run created"
          : "cleanup: could not unregister \(address) (status \(answer.map { String($0.status) } ?? "none"))")
    }
    created.removeAll()
  }

  /// Whether `/v1/info` says this server speaks at least `major.minor` (an old server without
  /// `protocolVersion` speaks less than 1.5).
  func speaks(_ major: Int, _ minor: Int) -> Bool {
    guard let version = protocolVersion else { return false }
    return version.major > major || (version.major == major && version.minor >= minor)
  }
}
