/// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: it refuses
/// anything a scraper might take differently than we mean. Shared by the API and integration tests.
///
/// Rules checked: every line ends with `\n` and is a `# HELP`, a `# TYPE` or a sample; each family
/// has exactly one HELP followed by one TYPE, before its samples, and its samples follow it
/// without another family in between; names and label names are valid; label values are quoted
/// with only `\\`, `\"`, `\n` escapes; values are floats as Go parses them; no series twice;
/// counters end in `_total`; a histogram's series are `_bucket` (with `le`), `_sum`, `_count`, its
/// buckets are ordered by `le`, never decrease, end with `+Inf`, and `_count` equals the `+Inf`
/// bucket.
public struct PrometheusDocument {
  public struct Sample: Equatable {
    public var name: String
    public var labels: [String: String]
    public var value: Double
  }

  public struct Family {
    public var help: String
    public var type: String
  }

  public struct Failure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
  }

  public private(set) var families: [String: Family] = [:]
  public private(set) var familyOrder: [String] = []
  public private(set) var samples: [Sample] = []

  public init(parsing text: String) throws {
    guard text.hasSuffix("\n") else { throw Failure("the document does not end with a line feed") }
    var current: String?
    var pendingHelp: (name: String, help: String)?
    var seen = Set<String>()
    for (index, line) in text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      let number = index + 1
      if line.isEmpty { throw Failure("line \(number) is empty") }
      if line.hasPrefix("# HELP ") {
        let rest = line.dropFirst(7)
        guard let space = rest.firstIndex(of: " ") else { throw Failure("line \(number): HELP without text") }
        let name = String(rest[..<space])
        try Self.checkName(name, number)
        guard families[name] == nil, pendingHelp == nil else {
          throw Failure("line \(number): second HELP for \(name), or HELP without TYPE before it")
        }
        pendingHelp = (name, try Self.unescapeHelp(rest[rest.index(after: space)...], number))
        continue
      }
      if line.hasPrefix("# TYPE ") {
        let parts = line.dropFirst(7).split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw Failure("line \(number): TYPE needs a name and a type") }
        let name = String(parts[0])
        let type = String(parts[1])
        guard let help = pendingHelp, help.name == name else {
          throw Failure("line \(number): TYPE for \(name) without a HELP line right before it")
        }
        guard ["counter", "gauge", "histogram", "summary", "untyped"].contains(type) else {
          throw Failure("line \(number): unknown type \(type)")
        }
        if type == "counter" && !name.hasSuffix("_total") {
          throw Failure("line \(number): counter \(name) does not end in _total")
        }
        families[name] = Family(help: help.help, type: type)
        familyOrder.append(name)
        pendingHelp = nil
        current = name
        continue
      }
      if line.hasPrefix("#") { throw Failure("line \(number): unexpected comment \(line)") }
      guard pendingHelp == nil else { throw Failure("line \(number): sample after HELP without TYPE") }
      let sample = try Self.parseSample(line, number)
      guard let family = current, let type = families[family]?.type else {
        throw Failure("line \(number): sample \(sample.name) before any TYPE")
      }
      let allowed =
        type == "histogram"
        ? [family + "_bucket", family + "_sum", family + "_count"] : [family]
      guard allowed.contains(sample.name) else {
        throw Failure("line \(number): sample \(sample.name) does not belong to family \(family) (\(type))")
      }
      if type == "histogram" && (sample.name.hasSuffix("_bucket") != (sample.labels["le"] != nil)) {
        throw Failure("line \(number): `le` belongs on histogram buckets only")
      }
      let key =
        sample.name + "{"
        + sample.labels.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: ",")
      guard seen.insert(key).inserted else { throw Failure("line \(number): series \(key) appears twice") }
      samples.append(sample)
    }
    if let pendingHelp { throw Failure("HELP for \(pendingHelp.name) without TYPE at the end") }
    try checkHistograms()
  }

  /// The value of the one sample `name` with exactly these labels, or nil.
  public func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
    samples.first { $0.name == name && $0.labels == labels }?.value
  }

  /// Every sample named `name`.
  public func all(_ name: String) -> [Sample] { samples.filter { $0.name == name } }

  private func checkHistograms() throws {
    for (name, family) in families where family.type == "histogram" {
      var groups: [[String: String]: [(le: Double, count: Double)]] = [:]
      for sample in all(name + "_bucket") {
        var rest = sample.labels
        let le = rest.removeValue(forKey: "le")!
        guard let bound = Self.float(le) else { throw Failure("\(name): le=\"\(le)\" is not a number") }
        groups[rest, default: []].append((bound, sample.value))
      }
      for (labels, buckets) in groups {
        for pair in zip(buckets, buckets.dropFirst()) {
          guard pair.0.le < pair.1.le else { throw Failure("\(name)\(labels): buckets out of order") }
          guard pair.0.count <= pair.1.count else {
            throw Failure("\(name)\(labels): bucket counts decrease")
          }
        }
        guard let last = buckets.last, last.le == .infinity else {
          throw Failure("\(name)\(labels): the last bucket is not +Inf")
        }
        guard let count = value(name + "_count", labels), count == last.count else {
          throw Failure("\(name)\(labels): _count is missing or differs from the +Inf bucket")
        }
        guard value(name + "_sum", labels) != nil else { throw Failure("\(name)\(labels): _sum is missing") }
      }
      for sample in all(name + "_count") where groups[sample.labels] == nil {
        throw Failure("\(name)\(sample.labels): _count without buckets")
      }
    }
  }

  private static func checkName(_ name: String, _ number: Int) throws {
    let bytes = Array(name.utf8)
    guard let first = bytes.first, isLetter(first) || first == 0x5F || first == 0x3A,
      bytes.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x5F || $0 == 0x3A })
    else { throw Failure("line \(number): invalid metric name \(name)") }
  }

  private static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }
  private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

  private static func unescapeHelp(_ text: Substring, _ number: Int) throws -> String {
    var result = ""
    var escaped = false
    for character in text {
      if escaped {
        switch character {
        case "\\": result += "\\"
        case "n": result += "\n"
        default: throw Failure("line \(number): bad escape \\\(character) in HELP")
        }
        escaped = false
      } else if character == "\\" {
        escaped = true
      } else {
        result.append(character)
      }
    }
    if escaped { throw Failure("line \(number): HELP ends in a backslash") }
    return result
  }

  private static func parseSample(_ line: Substring, _ number: Int) throws -> Sample {
    let bytes = Array(line.utf8)
    var index = 0
    while index < bytes.count, bytes[index] != 0x7B, bytes[index] != 0x20 { index += 1 }
    let name = String(decoding: bytes[0..<index], as: UTF8.self)
    try checkName(name, number)
    var labels: [String: String] = [:]
    if index < bytes.count, bytes[index] == 0x7B {
      index += 1
      while true {
        guard index < bytes.count else { throw Failure("line \(number): unterminated labels") }
        if bytes[index] == 0x7D {
          index += 1
          break
        }
        if !labels.isEmpty {
          guard bytes[index] == 0x2C else { throw Failure("line \(number): expected , between labels") }
          index += 1
        }
        let start = index
        while index < bytes.count, bytes[index] != 0x3D { index += 1 }
        let label = String(decoding: bytes[start..<index], as: UTF8.self)
        guard let first = label.utf8.first, isLetter(first) || first == 0x5F,
          label.utf8.allSatisfy({ isLetter($0) || isDigit($0) || $0 == 0x5F })
        else { throw Failure("line \(number): invalid label name \(label)") }
        guard index + 1 < bytes.count, bytes[index] == 0x3D, bytes[index + 1] == 0x22 else {
          throw Failure("line \(number): expected =\" after \(label)")
        }
        index += 2
        var value: [UInt8] = []
        while true {
          guard index < bytes.count else { throw Failure("line \(number): unterminated label value") }
          let byte = bytes[index]
          index += 1
          if byte == 0x22 { break }
          if byte == 0x5C {
            guard index < bytes.count else { throw Failure("line \(number): label value ends in \\") }
            switch bytes[index] {
            case 0x5C: value.append(0x5C)
            case 0x22: value.append(0x22)
            case 0x6E: value.append(0x0A)
            default: throw Failure("line \(number): bad escape in a label value")
            }
            index += 1
          } else {
            value.append(byte)
          }
        }
        guard labels.updateValue(String(decoding: value, as: UTF8.self), forKey: label) == nil else {
          throw Failure("line \(number): label \(label) twice")
        }
      }
    }
    guard index < bytes.count, bytes[index] == 0x20 else { throw Failure("line \(number): expected a space") }
    let rest = String(decoding: bytes[(index + 1)...], as: UTF8.self)
    let parts = rest.split(separator: " ", omittingEmptySubsequences: false)
    guard (1...2).contains(parts.count), let value = float(String(parts[0])) else {
      throw Failure("line \(number): bad value \(rest)")
    }
    if parts.count == 2 {
      guard Int64(parts[1]) != nil else { throw Failure("line \(number): bad timestamp \(parts[1])") }
    }
    return Sample(name: name, labels: labels, value: value)
  }

  /// A float as Prometheus (Go's ParseFloat) reads it, or nil.
  public static func float(_ text: String) -> Double? {
    switch text {
    case "+Inf", "Inf": return .infinity
    case "-Inf": return -.infinity
    case "NaN": return .nan
    default:
      guard !text.isEmpty,
        text.utf8.allSatisfy({
          isDigit($0) || $0 == 0x2E || $0 == 0x2D || $0 == 0x2B || $0 == 0x65 || $0 == 0x45
        })
      else { return nil }
      return Double(text)
    }
  }
}
