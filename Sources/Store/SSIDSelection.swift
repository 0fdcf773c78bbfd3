/// A set of AX.25 SSIDs 0–15 (settings `ssids` as a list, `ackSsids`; docs/protocol.md "Opt-in answers (`want`)"),
/// one bit per SSID: SSID 0 is the bare call (`CALL-0` is `CALL`). Stored as the SSIDs in ascending decimal,
/// separated by single spaces (`"0 7 9"`, `""` for none).
public struct SSIDSet: Sendable, Hashable {
  /// The largest SSID.
  public static let maximum = 15
  /// Bit `n` set: SSID `n` is in the set.
  public private(set) var bits: UInt16

  /// A set of the given bits.
  public init(bits: UInt16) { self.bits = bits }

  /// A set of `ssids` (each 0–15; others are left out).
  public init(_ ssids: some Sequence<Int>) {
    var bits: UInt16 = 0
    for ssid in ssids where (0...Self.maximum).contains(ssid) { bits |= 1 << UInt16(ssid) }
    self.bits = bits
  }

  /// No SSID.
  public static let empty = SSIDSet(bits: 0)
  /// Every SSID 0–15.
  public static let every = SSIDSet(bits: .max)

  /// Validates a settings list (`ssids`, `ackSsids`): each an integer 0–15, at most 16 entries; repeats are
  /// dropped, the answer is sorted.
  /// - Throws: ``SettingsError`` naming `field` (`ackSsids`) or the entry (`ackSsids[2]`).
  public init(validating values: [Int64], field: String) throws(SettingsError) {
    guard values.count <= Self.maximum + 1 else {
      throw SettingsError(
        field: field, reason: "holds \(values.count) SSIDs; at most \(Self.maximum + 1) (0-15)")
    }
    var bits: UInt16 = 0
    for (index, value) in values.enumerated() {
      guard (0...Int64(Self.maximum)).contains(value) else {
        throw SettingsError(field: "\(field)[\(index)]", reason: "must be an SSID from 0 to 15, not \(value)")
      }
      bits |= 1 << UInt16(value)
    }
    self.bits = bits
  }

  /// Whether `ssid` is in the set (false outside 0–15).
  public func contains(_ ssid: Int) -> Bool {
    (0...Self.maximum).contains(ssid) && bits & (1 << UInt16(ssid)) != 0
  }

  /// The set with `ssid` (0–15) added.
  public func inserting(_ ssid: Int) -> SSIDSet { SSIDSet(bits: bits | SSIDSet([ssid]).bits) }
  /// The set without `ssid`.
  public func removing(_ ssid: Int) -> SSIDSet { SSIDSet(bits: bits & ~SSIDSet([ssid]).bits) }

  /// Whether the set holds no SSID.
  public var isEmpty: Bool { bits == 0 }

  /// The SSIDs, ascending.
  public var ssids: [Int] { (0...Self.maximum).filter { bits & (1 << UInt16($0)) != 0 } }

  /// The stored form: `"0 7 9"`, `""` for none.
  public var storedText: String { ssids.map(String.init).joined(separator: " ") }

  /// A set read from its stored form; anything that is not an SSID is left out.
  public init(stored text: some StringProtocol) {
    self.init(text.split(separator: " ").compactMap { Int($0) })
  }
}

/// Which SSIDs of its call a station collects (setting `ssids`; docs/protocol.md "Opt-in answers (`want`)"). Messages
/// to the station's own address are stored as always; those to the other chosen SSIDs are stored for it with
/// their addressee (`to`), in a ring of their own, and shown only to requests with `want:["ssids"]`.
public enum SSIDSelection: Sendable, Hashable {
  /// Only the station's own address (the default).
  case exact
  /// Every SSID 0–15 of the call.
  case all
  /// These SSIDs (the station's own one included).
  case list(SSIDSet)

  /// The SSIDs besides `own` whose messages the station collects (none for ``exact``).
  public func others(own: Int) -> SSIDSet {
    switch self {
    case .exact: .empty
    case .all: SSIDSet.every.removing(own)
    case .list(let set): set.removing(own)
    }
  }

  /// The stored form (`station_settings.ssids`): `exact`, `all` or the list (``SSIDSet/storedText``).
  public var storedText: String {
    switch self {
    case .exact: "exact"
    case .all: "all"
    case .list(let set): set.isEmpty ? "exact" : set.storedText
    }
  }

  /// The selection read from its stored form; anything unreadable is ``exact``.
  public init(stored text: some StringProtocol) {
    switch text {
    case "exact": self = .exact
    case "all": self = .all
    default:
      let set = SSIDSet(stored: text)
      self = set.isEmpty ? .exact : .list(set)
    }
  }

  /// The selection with the station's own SSID `own` in a list (a list always holds it).
  public func includingOwn(_ own: Int) -> SSIDSelection {
    if case .list(let set) = self { return .list(set.inserting(own)) }
    return self
  }
}
