/// A list of APRS calls as station settings hold them (`blocked`, `quietBypass`; docs/protocol.md "Station settings").
///
/// Each entry is an upper-case call as APRS-IS carries a sender: a base of 1–9 letters or digits, optionally
/// `-` and an SSID of 1–2 letters or digits, at most 9 characters together. A bare call (`KJ7ABC`) matches every
/// SSID of it (`KJ7ABC`, `KJ7ABC-7`, …); `KJ7ABC-7` matches only that one (`KJ7ABC-0` also matches the bare
/// `KJ7ABC`, the same station). At most ``maximumCount`` entries, without repeats, in the order first given.
/// Stored as the entries joined by single spaces (`station_settings.blocked`, `quiet_bypass`).
public struct CallList: Sendable, Equatable {
  /// The most entries a list may hold (docs/protocol.md: `blocked` at most 100 calls; `quietBypass` likewise).
  public static let maximumCount = 100
  /// The longest entry, SSID included (APRS-IS source calls are at most 9 characters).
  public static let maximumLength = 9

  /// The entries, upper case, in the order first given.
  public private(set) var calls: [String]

  /// No calls.
  public static let empty = CallList(trusted: [])

  init(trusted calls: [String]) {
    self.calls = calls
  }

  /// Validates `entries` (any case, surrounding spaces trimmed) for the settings field `field` (`blocked`,
  /// `quietBypass`): upper-cased, repeats dropped.
  /// - Throws: ``SettingsError`` naming `field` (or `field[index]` for a bad entry).
  public init(validating entries: [String], field: String) throws(SettingsError) {
    guard entries.count <= Self.maximumCount else {
      throw SettingsError(field: field, reason: "holds \(entries.count) calls; at most \(Self.maximumCount)")
    }
    var calls: [String] = []
    var seen = Set<String>()
    for (index, entry) in entries.enumerated() {
      guard let call = Self.normalized(entry) else {
        throw SettingsError(
          field: "\(field)[\(index)]",
          reason: "must be a call like KJ7ABC (every SSID) or KJ7ABC-7 (1-9 letters or digits, an optional"
            + " -SSID of 1-2 letters or digits, at most 9 characters)")
      }
      if seen.insert(call).inserted { calls.append(call) }
    }
    self.calls = calls
  }

  /// The list as stored (entries joined by spaces); entries that are not valid calls are left out.
  init(stored text: String) {
    var calls: [String] = []
    for part in text.split(separator: " ") {
      if let call = Self.normalized(String(part)), !calls.contains(call) { calls.append(call) }
    }
    self.calls = calls
  }

  /// The stored form: the entries joined by single spaces (`""` for none).
  var storedText: String { calls.joined(separator: " ") }

  /// Whether the list holds no call.
  public var isEmpty: Bool { calls.isEmpty }

  /// Whether `sender` (a source call as APRS-IS carries it, any case) is on the list: equal to an entry with an
  /// SSID, or its base equal to a bare entry.
  public func matches(_ sender: some StringProtocol) -> Bool {
    guard !calls.isEmpty else { return false }
    let upper = sender.uppercased()
    let base = upper.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first.map(
      String.init)
    for call in calls {
      if call == upper || call == base { return true }
      if call.hasSuffix("-0"), call.dropLast(2) == upper { return true }
    }
    return false
  }

  /// `entry` trimmed and upper-cased when it is a valid call, else nil.
  static func normalized(_ entry: String) -> String? {
    let bytes = Array(entry.utf8)
    var lower = 0
    var upper = bytes.count
    while lower < upper && (bytes[lower] == 0x20 || bytes[lower] == 0x09) { lower += 1 }
    while upper > lower && (bytes[upper - 1] == 0x20 || bytes[upper - 1] == 0x09) { upper -= 1 }
    guard upper - lower >= 1, upper - lower <= maximumLength else { return nil }
    var call: [UInt8] = []
    call.reserveCapacity(upper - lower)
    var baseLength = 0
    var ssidLength: Int?
    for byte in bytes[lower..<upper] {
      if byte == UInt8(ascii: "-") {
        guard ssidLength == nil, baseLength > 0 else { return nil }
        ssidLength = 0
        call.append(byte)
        continue
      }
      let folded = (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) ? byte - 0x20 : byte
      let isAlphanumeric =
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(folded)
        || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(folded)
      guard isAlphanumeric else { return nil }
      call.append(folded)
      if let length = ssidLength { ssidLength = length + 1 } else { baseLength += 1 }
    }
    if let ssidLength, !(1...2).contains(ssidLength) { return nil }
    return String(decoding: call, as: UTF8.self)
  }
}
