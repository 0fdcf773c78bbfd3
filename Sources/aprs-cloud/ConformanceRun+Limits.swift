import APRS
import JSON

/// The checks of limits and of leaving: a body past 64 KiB, a rate limit answered with `Retry-After`, the
/// device-scoped and the whole-station unregister.
extension ConformanceRun {
  /// A body one byte past 65536 is a 413 with a JSON error; heartbeats of one device past its budget (60 an
  /// hour) are a 429 with `Retry-After` in seconds, probed with at most ``rateProbeLimit`` heartbeats of the
  /// run's own device of the spare station, stopping at the first 429.
  func checkLimits() throws(CheckStop) -> String {
    let prefix = Array("{\"callsign\":\"\(station.base)\",\"ssid\":\(station.ssid),\"pad\":\"".utf8)
    let body =
      prefix + [UInt8](repeating: UInt8(ascii: "x"), count: 65_537 - prefix.count - 2) + Array("\"}".utf8)
    try expectError(
      try postRaw("register", body), status: 413, "POST /v1/register with a body of 65537 bytes")
    guard existedBefore[spare] == false,
      devices.contains(where: { $0.station == spare && $0.token == spareToken })
    else {
      throw .skip(
        "a body of 65537 bytes is a 413 with a JSON error; the rate limit is not probed: \(spare) existed before"
          + " the run or the heartbeat check did not create it, and the run spends no budget of a station it did not make"
      )
    }
    let beat = identity(spare) + [("platform", .string("android")), ("pushToken", .string(spareToken))]
    for attempt in 1...Self.rateProbeLimit {
      let answer = try post("heartbeat", beat)
      if answer.status == 200 { continue }
      let error = try expectError(
        answer, status: 429, prefix: "too many", "heartbeat \(attempt) of one device")
      guard let header = answer.header("retry-after") else {
        throw .fail("heartbeat \(attempt) of one device: a 429 (\(error)) without Retry-After")
      }
      guard let seconds = Int(header.trimmingCharacters(in: " ")), seconds >= 1 else {
        throw .fail(
          "heartbeat \(attempt) of one device: Retry-After \"\(header)\" is not a number of seconds ≥ 1")
      }
      return "a body of 65537 bytes is a 413 with a JSON error; heartbeat \(attempt) of one device is a 429"
        + " (\(error)) with Retry-After \(seconds)"
    }
    throw .skip(
      "a body of 65537 bytes is a 413 with a JSON error; \(Self.rateProbeLimit) heartbeats of one device met no"
        + " rate limit (the documented budget is 60 an hour: this server allows more), so Retry-After is not probed"
    )
  }

  /// With a non-empty `pushToken` only that device goes and the station stays; the answer is `{}`.
  func checkUnregister() throws(CheckStop) -> String {
    let answer = try post("unregister", identity(station) + [("pushToken", .string(mainToken))])
    let object = try expectSuccess(answer, "POST /v1/unregister with the run's pushToken")
    try require(object.keys.isEmpty, "unregister: the answer is \(answer.bodyExcerpt), expected {}")
    unregistered(station, token: mainToken)
    switch isRegistered(station) {
    case true?: return "the device went, the answer is {}, and \(station) stays registered"
    case false?: throw .fail("unregister with a pushToken dropped the whole station \(station)")
    case nil: return "the answer is {} (whether the station stayed cannot be told: no /v1/settings)"
    }
  }

  /// An empty `pushToken` (or none) drops the whole station, answered `{}`: tried only on stations the run
  /// created.
  func checkUnregisterEmptyToken() throws(CheckStop) -> String {
    let mine = [station, spare].filter { ownsWhole($0) }
    guard !mine.isEmpty else {
      throw .skip(
        "neither \(station) nor \(spare) was created by this run: a whole-station unregister would wipe a station"
          + " that existed before, so only the run's devices are unregistered")
    }
    var done: [String] = []
    for (index, address) in mine.enumerated() {
      // The empty token first; a request without pushToken is the same whole-station unregister.
      let members = identity(address) + (index == 0 ? [("pushToken", JSONValue.string(""))] : [])
      let what = "POST /v1/unregister of \(address) with " + (index == 0 ? "pushToken \"\"" : "no pushToken")
      let answer = try post("unregister", members)
      let object = try expectSuccess(answer, what)
      try require(object.keys.isEmpty, "\(what): the answer is \(answer.bodyExcerpt), expected {}")
      unregistered(address, token: nil)
      try require(
        isRegistered(address) == false, "\(what): \(address) is still registered (/v1/settings is not a 404)")
      done.append(address.description + (index == 0 ? " (pushToken \"\")" : " (no pushToken)"))
    }
    return "dropped whole, each answered {} and no longer registered: " + done.joined(separator: ", ")
  }
}

extension String {
  /// Without `character` at either end.
  fileprivate func trimmingCharacters(in character: Character) -> String {
    var slice = self[...]
    while slice.first == character { slice = slice.dropFirst() }
    while slice.last == character { slice = slice.dropLast() }
    return String(slice)
  }
}
