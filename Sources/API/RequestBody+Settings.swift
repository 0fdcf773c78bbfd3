import APRS
import JSON
import Store

extension RequestBody {
  /// The settings fields of `POST /v1/settings` (docs/protocol.md "Station settings") as a validated partial update:
  /// fields left out (or `null`, except `quietHours`, where `null` turns them off) stay as they are. Anything
  /// wrong is a 400 naming the field (`blocked[2]`, `quietHours.start`, …), and nothing is stored. `retentionCap`:
  /// the most `retention.max` may be (`[server] maxUnpulledPerStation`).
  func settingsUpdate(retentionCap: Int = 500) throws(APIError) -> StationSettingsUpdate {
    var update = StationSettingsUpdate()
    if let value = self["blocked"] {
      let calls = try Self.callStrings(value, field: "blocked")
      update.blocked = try Self.validated { () throws(SettingsError) in
        try CallList(validating: calls, field: "blocked")
      }
    }
    if let value = try int("mutedUntil", in: 0...StationSettings.maximumMutedUntil) {
      update.mutedUntil = try Self.validated { () throws(SettingsError) in
        try StationSettings.validMutedUntil(value)
      }
    }
    if contains("quietHours") {
      update.quietHours = .some(try quietHours())
    }
    if let value = self["quietBypass"] {
      let calls = try Self.callStrings(value, field: "quietBypass")
      update.quietBypass = try Self.validated { () throws(SettingsError) in
        try CallList(validating: calls, field: "quietBypass")
      }
    }
    if let text = try string("ackPolicy", maxLength: 16) {
      guard let policy = AckPolicy(rawValue: text) else {
        throw .badRequest(#"ackPolicy must be "server", "device", "never" or "fallback""#)
      }
      update.ackPolicy = policy
    }
    if let text = try string("keylessDevices", maxLength: 16) {
      guard let choice = KeylessDevices(rawValue: text) else {
        throw .badRequest(#"keylessDevices must be "allow" or "deny""#)
      }
      update.keylessDevices = choice
    }
    if let value = self["ssids"] {
      update.ssids = try Self.ssidSelection(value)
    }
    if let value = self["ackSsids"] {
      let numbers = try Self.ssidNumbers(value, field: "ackSsids")
      update.ackSsids = try Self.validated { () throws(SettingsError) in
        try SSIDSet(validating: numbers, field: "ackSsids")
      }
    }
    if let value = self["retention"] {
      update.retention = try Self.retention(value, cap: retentionCap)
    }
    if let seconds = try int(
      "fallbackWait", in: Int64(FallbackWait.minimumSeconds)...Int64(FallbackWait.maximumSeconds))
    {
      update.fallbackWait = FallbackWait(seconds: Int(seconds))
    }
    if let text = try string("airAnswered", maxLength: 16) {
      guard let choice = AirAnswered(rawValue: text) else {
        throw .badRequest(#"airAnswered must be "push", "quiet" or "none""#)
      }
      update.airAnswered = choice
    }
    if let flag = try bool("trackSent") { update.trackSent = flag }
    return update
  }

  /// `retention`: `{"mode":"ring"}` or `{"mode":"untilPulled","max":N}` (1 to the cap).
  private static func retention(_ value: JSONValue, cap: Int) throws(APIError) -> Retention {
    guard case .object(let object) = value else {
      throw .badRequest(
        #"retention must be {"mode":"ring"} or {"mode":"untilPulled","max":N}, not "# + value.typeName)
    }
    for key in object.keys where key != "mode" && key != "max" {
      throw .badRequest("retention.\(key.prefix(32)) is not a retention field (mode, max)")
    }
    guard case .string(let mode) = object["mode"] ?? .null else {
      throw .badRequest(#"retention.mode must be "ring" or "untilPulled""#)
    }
    switch mode {
    case "ring":
      guard (object["max"] ?? .null) == .null else {
        throw .badRequest("retention.max is only for untilPulled")
      }
      return .ring
    case "untilPulled":
      guard case .number(let number) = object["max"] ?? .null, let max = number.int64 else {
        throw .badRequest("retention.max must be an integer from 1 to \(cap) (the server's cap)")
      }
      return try validated { () throws(SettingsError) in try Retention.untilPulled(validating: max, cap: cap)
      }
    default:
      throw .badRequest(#"retention.mode must be "ring" or "untilPulled""#)
    }
  }

  /// `ssids`: `"exact"`, `"all"`, or an array of SSIDs 0–15 (repeats dropped, sorted; the station's own SSID is
  /// added by the store).
  private static func ssidSelection(_ value: JSONValue) throws(APIError) -> SSIDSelection {
    if case .string(let text) = value {
      switch text {
      case "exact": return .exact
      case "all": return .all
      default:
        throw .badRequest(#"ssids must be "exact", "all" or an array of SSIDs from 0 to 15"#)
      }
    }
    let numbers = try ssidNumbers(value, field: "ssids")
    let set = try validated { () throws(SettingsError) in try SSIDSet(validating: numbers, field: "ssids") }
    return set.isEmpty ? .exact : .list(set)
  }

  /// An array of integers (`ssids`, `ackSsids`); their range is checked by ``SSIDSet``.
  private static func ssidNumbers(_ value: JSONValue, field: String) throws(APIError) -> [Int64] {
    guard case .array(let elements) = value else {
      let choices = field == "ssids" ? #""exact", "all" or an array of SSIDs"# : "an array of SSIDs"
      throw .badRequest("\(field) must be \(choices) from 0 to 15, not \(value.typeName)")
    }
    guard elements.count <= SSIDSet.maximum + 1 else {
      throw .badRequest("\(field) holds \(elements.count) SSIDs; at most \(SSIDSet.maximum + 1) (0-15)")
    }
    var numbers: [Int64] = []
    for (index, element) in elements.enumerated() {
      guard case .number(let number) = element, let integer = number.int64 else {
        throw .badRequest(
          "\(field)[\(index)] must be an SSID from 0 to 15 (an integer), not \(element.typeName)")
      }
      numbers.append(integer)
    }
    return numbers
  }

  /// `quietHours`: `null` (off) or `{"start":…,"end":…,"utcOffsetMinutes":…}`, each an integer.
  private func quietHours() throws(APIError) -> QuietHours? {
    guard let value = self["quietHours"] else { return nil }
    guard case .object(let object) = value else {
      throw .badRequest(
        "quietHours must be null or an object with start, end and utcOffsetMinutes, not \(value.typeName)")
    }
    let start = try Self.integer(object["start"], field: "quietHours.start")
    let end = try Self.integer(object["end"], field: "quietHours.end")
    let offset = try Self.integer(object["utcOffsetMinutes"], field: "quietHours.utcOffsetMinutes")
    return try Self.validated { () throws(SettingsError) in
      try QuietHours(start: start, end: end, utcOffsetMinutes: offset)
    }
  }

  /// A required integer member of a nested object (small: minutes).
  private static func integer(_ value: JSONValue?, field: String) throws(APIError) -> Int {
    guard let value, value != .null else { throw .badRequest("\(field) is required (an integer)") }
    guard case .number(let number) = value, let integer = number.int64 else {
      throw .badRequest("\(field) must be an integer, not \(value.typeName)")
    }
    // A range check, never `abs`: `abs(Int64.min)` traps (a request must never cost the process).
    guard (-1_000_000...1_000_000).contains(integer) else {
      throw .badRequest("\(field) is out of range: \(integer)")
    }
    return Int(integer)
  }

  /// An array of strings (`blocked`, `quietBypass`); its length and the calls are checked by ``CallList``.
  private static func callStrings(_ value: JSONValue, field: String) throws(APIError) -> [String] {
    guard case .array(let elements) = value else {
      throw .badRequest("\(field) must be an array of calls, not \(value.typeName)")
    }
    guard elements.count <= CallList.maximumCount else {
      throw .badRequest("\(field) holds \(elements.count) calls; at most \(CallList.maximumCount)")
    }
    var calls: [String] = []
    calls.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      guard case .string(let text) = element, text.utf8.count <= 32 else {
        throw .badRequest("\(field)[\(index)] must be a call string like KJ7ABC or KJ7ABC-7")
      }
      calls.append(text)
    }
    return calls
  }

  /// Runs a settings validation, its refusal a 400 naming the field.
  private static func validated<T>(_ body: () throws(SettingsError) -> T) throws(APIError) -> T {
    do {
      return try body()
    } catch {
      throw .badRequest(error.description)
    }
  }
}
