/// The zones a weather alert names (NWS, SKY, CWA, BOM messages: the weather servers' `DDHHMMz,TYPE,zones`
/// texts), in every form the servers have sent them. One pure function, ``zones(in:)``, reads them all; the
/// zones come out in one canonical form each, so a subscription matches whichever form the alert used.
///
/// Forms (sources: Xastir `src/alert.c`, which reads them all and quotes real packets; the format pages of the
/// weather servers, aprs-is.net/WX and wxsvr.aprs.net.au/protocol.html):
/// - NWS county and zone codes (UGC): two letters (a state or marine area), `C` (county) or `Z` (zone), three
///   digits: `OHC081`, `PAZ125`, `AMZ686`. Canonical as they are.
/// - The original server's underscore form, `CA_Z007`, `OK_C113` (`NWS-ADVIS:191700z,WIND,CA_Z007,CA_Z065`):
///   normalised to `CAZ007`, `OKC113`.
/// - Compressed lists: pieces separated by `-`, a piece of digits only keeping the last prefix, `>` a range:
///   `ARZ003>007-012-PAC125` is ARZ003 … ARZ007, ARZ012, PAC125; a full code after `>` too (`OHC081>OHC083`).
/// - Numbers without their leading zeros (the servers' compressed lists): `IAC57-95-103-ILC1-67`,
///   `ARZ3>7-12>16`: one to three digits, padded to three (`IAC057`, `ILC001`, `ARZ003` … `ARZ007`).
/// - BOM (Australian Bureau of Meteorology) areas as WXSVR-AU sends them (`BOM_WARN :141300z,WIND,
///   TAS_MW002>003-005>007-009`): a state (`NSW`, `VIC`, `QLD`, `TAS`, `NT`, `WA`, `SA`), `_`, the kind of area
///   (`CW`, `MW`, `PW`, `FW`, `ME`), three digits; compressed like the NWS lists. Canonical as sent, with the
///   underscore: `TAS_MW002`, `SA_MW005`.
///
/// The list is the comma-separated fields of the text; a field that is no zone list (the time, the type,
/// statement text) names nothing. A space ends the list once a zone was read (Xastir: "ignore anything after a
/// space"): `OHC081,PAC125 TORNADO, …` names OHC081 and PAC125 and nothing of the statement after it. Letters
/// are read in any case. Pure and bounded: at most ``maximumZones`` are expanded.
public enum NWSZones {
  /// The most zones taken from one message (a range past it is cut).
  public static let maximumZones = 1_000
  /// The longest canonical code (`NSW_FW001`), bytes.
  public static let maximumLength = 9

  /// The states of the BOM areas (WXSVR-AU; the ACT is in NSW's areas).
  static let bomStates: Set<[UInt8]> = Set(
    ["NSW", "VIC", "QLD", "TAS", "NT", "WA", "SA"].map { Array($0.utf8) })
  /// The kinds of BOM area (WXSVR-AU's shapefiles).
  static let bomKinds: Set<[UInt8]> = Set(["CW", "MW", "PW", "FW", "ME"].map { Array($0.utf8) })

  /// Whether `code` is one zone in its canonical form (`OHC081`, `TAS_MW002`).
  public static func isZone(_ code: String) -> Bool {
    canonical(code) == code
  }

  /// One zone written in any of the forms above (`OHC081`, `ohc81`, `OH_C081`, `tas_mw2`) in its canonical
  /// form (`OHC081`, `TAS_MW002`); nil for anything else (a list, a range, another code).
  public static func canonical(_ code: String) -> String? {
    let upper = Array(code.uppercased().utf8)
    guard upper.count <= maximumLength, let (prefix, number) = self.code(upper[...], prefix: nil) else {
      return nil
    }
    return zone(prefix, number)
  }

  /// The zones `text` names, canonical, without repeats (in first-seen order).
  public static func zones(in text: String) -> [String] {
    var found: [String] = []
    var seen = Set<String>()
    let upper = Array(text.uppercased().utf8)
    for field in upper.split(separator: ASCII.comma, omittingEmptySubsequences: true) {
      var token = field.drop { $0 == ASCII.space }
      let space = token.firstIndex(of: ASCII.space)
      if let space { token = token[..<space] }
      var prefix: [UInt8]?
      for piece in token.split(separator: ASCII.hyphen, omittingEmptySubsequences: true) {
        guard let parsed = parsePiece(piece, prefix: prefix) else {
          prefix = nil
          continue
        }
        prefix = parsed.prefix
        for number in parsed.first...parsed.last {
          guard found.count < maximumZones else { return found }
          let zone = zone(parsed.prefix, number)
          if seen.insert(zone).inserted { found.append(zone) }
        }
      }
      if space != nil, !found.isEmpty { break }
    }
    return found
  }

  /// The canonical code: the prefix and the number in three digits.
  private static func zone(_ prefix: [UInt8], _ number: Int) -> String {
    String(
      decoding: prefix + [
        ASCII.zero + UInt8(number / 100), ASCII.zero + UInt8(number / 10 % 10),
        ASCII.zero + UInt8(number % 10),
      ], as: UTF8.self)
  }

  /// One `-` piece: `OHC081`, `OHC081>083`, `081`, `81>83` (a full code after `>` too, with the same prefix).
  private static func parsePiece(
    _ piece: ArraySlice<UInt8>, prefix inherited: [UInt8]?
  ) -> (prefix: [UInt8], first: Int, last: Int)? {
    let parts = piece.split(separator: ASCII.greaterThan, maxSplits: 1, omittingEmptySubsequences: false)
    guard let head = parts.first, let (prefix, first) = code(head, prefix: inherited) else { return nil }
    guard parts.count == 2 else { return (prefix, first, first) }
    guard let (endPrefix, last) = code(parts[1], prefix: prefix), endPrefix == prefix, last >= first else {
      return nil
    }
    return (prefix, first, last)
  }

  /// A prefix and 1–3 digits, or (with a prefix in force) the digits alone: the canonical prefix and the number.
  private static func code(_ bytes: ArraySlice<UInt8>, prefix inherited: [UInt8]?) -> ([UInt8], Int)? {
    var digitsStart = bytes.endIndex
    while digitsStart > bytes.startIndex, ASCII.isDigit(bytes[digitsStart - 1]) { digitsStart -= 1 }
    let digits = bytes[digitsStart...]
    guard (1...3).contains(digits.count) else { return nil }
    let head = bytes[..<digitsStart]
    guard let prefix = head.isEmpty ? inherited : canonicalPrefix(head) else { return nil }
    return (prefix, digits.reduce(0) { $0 * 10 + Int($1 - ASCII.zero) })
  }

  /// `LLX` (NWS), `LL_X` (the original server's form, as `LLX`), or a BOM `SSS_KK` / `SS_KK`.
  private static func canonicalPrefix(_ head: ArraySlice<UInt8>) -> [UInt8]? {
    let bytes = Array(head)
    guard bytes.allSatisfy({ ASCII.isUpper($0) || $0 == ASCII.underscore }) else { return nil }
    func isKind(_ byte: UInt8) -> Bool { byte == 0x43 || byte == 0x5A }  // C Z
    switch bytes.count {
    case 3 where bytes[2] != ASCII.underscore && isKind(bytes[2]) && !bytes[0..<2].contains(ASCII.underscore):
      return bytes
    case 4 where bytes[2] == ASCII.underscore && isKind(bytes[3]) && !bytes[0..<2].contains(ASCII.underscore):
      return [bytes[0], bytes[1], bytes[3]]
    default:
      guard let underscore = bytes.firstIndex(of: ASCII.underscore),
        bomStates.contains(Array(bytes[..<underscore])),
        bomKinds.contains(Array(bytes[(underscore + 1)...]))
      else { return nil }
      return bytes
    }
  }
}
