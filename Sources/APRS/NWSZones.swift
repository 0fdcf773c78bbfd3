/// The zones a weather message names (NWS, SKY, CWA, BOM: the weather server's `DDHHMMz,TYPE,zones` texts).
///
/// Zones are UGC codes: two letters (a state or marine area), `C` (county) or `Z` (zone), three digits
/// (`OHC081`, `PAZ125`). The list is comma separated (`OHC081,PAC125`) or in the compressed UGC form the
/// weather servers use to fit 67 characters: pieces separated by `-`, a piece without letters keeping the last
/// prefix, `>` a range (`OHC081>083-085-PAC125` is OHC081, OHC082, OHC083, OHC085, PAC125). Any other field
/// (the time, the type, statement text) names no zone. Pure and bounded: at most ``maximumZones`` are expanded.
public enum NWSZones {
  /// The most zones taken from one message (a range past it is cut).
  public static let maximumZones = 1_000

  /// Whether `code` is one zone code (`OHC081`), upper case.
  public static func isZone(_ code: String) -> Bool {
    let bytes = Array(code.utf8)
    return bytes.count == 6 && isPrefix(bytes[0..<3]) && bytes[3...].allSatisfy(ASCII.isDigit)
  }

  /// The zones `text` names, upper case, without repeats (in first-seen order).
  public static func zones(in text: String) -> [String] {
    var found: [String] = []
    var seen = Set<String>()
    func add(_ prefix: ArraySlice<UInt8>, _ number: Int) -> Bool {
      guard found.count < maximumZones else { return false }
      var bytes = Array(prefix)
      bytes += [
        ASCII.zero + UInt8(number / 100), ASCII.zero + UInt8(number / 10 % 10),
        ASCII.zero + UInt8(number % 10),
      ]
      let zone = String(decoding: bytes, as: UTF8.self)
      if seen.insert(zone).inserted { found.append(zone) }
      return true
    }
    let upper = Array(text.uppercased().utf8)
    for field in upper.split(separator: ASCII.comma, omittingEmptySubsequences: true) {
      var prefix: ArraySlice<UInt8>?
      for piece in field.split(separator: ASCII.hyphen, omittingEmptySubsequences: true) {
        guard let parsed = parsePiece(piece, prefix: prefix) else {
          prefix = nil
          continue
        }
        prefix = parsed.prefix
        for number in parsed.first...parsed.last where !add(parsed.prefix, number) { return found }
      }
    }
    return found
  }

  /// One `-` piece: `OHC081`, `OHC081>083`, `081`, `081>083` (a full code after `>` too, with the same prefix).
  private static func parsePiece(
    _ piece: ArraySlice<UInt8>, prefix inherited: ArraySlice<UInt8>?
  ) -> (prefix: ArraySlice<UInt8>, first: Int, last: Int)? {
    let parts = piece.split(separator: ASCII.greaterThan, maxSplits: 1, omittingEmptySubsequences: false)
    guard let head = parts.first, let (prefix, first) = code(head, prefix: inherited) else { return nil }
    guard parts.count == 2 else { return (prefix, first, first) }
    guard let (endPrefix, last) = code(parts[1], prefix: prefix), endPrefix == prefix, last >= first else {
      return nil
    }
    return (prefix, first, last)
  }

  /// `LLX###` or (with a prefix in force) `###`.
  private static func code(
    _ bytes: ArraySlice<UInt8>, prefix inherited: ArraySlice<UInt8>?
  ) -> (ArraySlice<UInt8>, Int)? {
    let prefix: ArraySlice<UInt8>
    let digits: ArraySlice<UInt8>
    if bytes.count == 6, isPrefix(bytes.prefix(3)) {
      prefix = bytes.prefix(3)
      digits = bytes.dropFirst(3)
    } else if bytes.count == 3, let inherited {
      prefix = inherited
      digits = bytes
    } else {
      return nil
    }
    guard digits.allSatisfy(ASCII.isDigit) else { return nil }
    let number = digits.reduce(0) { $0 * 10 + Int($1 - ASCII.zero) }
    return (ArraySlice(prefix), number)
  }

  /// Two letters and `C` or `Z`.
  private static func isPrefix(_ bytes: ArraySlice<UInt8>) -> Bool {
    guard bytes.count == 3 else { return false }
    let i = bytes.startIndex
    let kind = bytes[i + 2]
    return ASCII.isUpper(bytes[i]) && ASCII.isUpper(bytes[i + 1]) && (kind == 0x43 || kind == 0x5A)
  }
}
