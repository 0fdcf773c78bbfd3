/// A document in the Prometheus text exposition format, version 0.0.4: each metric family is a
/// `# HELP` line, a `# TYPE` line and its samples (`name{label="value"} number`), one per line.
struct PrometheusText {
  /// The `Content-Type` of the format.
  static let contentType = "text/plain; version=0.0.4; charset=utf-8"

  private(set) var text = ""

  init(capacity: Int = 8192) {
    text.reserveCapacity(capacity)
  }

  /// The document as bytes.
  var bytes: [UInt8] { Array(text.utf8) }

  /// Starts a family: its `# HELP` and `# TYPE` lines. `type` is `counter`, `gauge` or `histogram`.
  mutating func family(_ name: String, _ type: String, _ help: String) {
    text += "# HELP " + name + " " + Self.escapeHelp(help) + "\n"
    text += "# TYPE " + name + " " + type + "\n"
  }

  /// One sample line.
  mutating func sample(_ name: String, _ labels: [(String, String)] = [], _ value: String) {
    text += name
    if !labels.isEmpty {
      text += "{"
      for (index, (label, labelValue)) in labels.enumerated() {
        if index > 0 { text += "," }
        text += label + "=\"" + Self.escapeLabel(labelValue) + "\""
      }
      text += "}"
    }
    text += " " + value + "\n"
  }

  /// A family with a single unlabelled sample.
  mutating func single(_ name: String, _ type: String, _ help: String, _ value: String) {
    family(name, type, help)
    sample(name, [], value)
  }

  /// `value` as Prometheus writes a float: `NaN`, `+Inf`, `-Inf`, or a decimal.
  static func number(_ value: Double) -> String {
    if value.isNaN { return "NaN" }
    if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
    if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
    return String(value)
  }

  /// Epoch milliseconds as seconds (`1800000000.123`).
  static func seconds(ms: Int64) -> String {
    let whole = ms / 1000
    let fraction = abs(ms % 1000)
    if fraction == 0 { return String(whole) }
    var digits = String(fraction)
    while digits.count < 3 { digits = "0" + digits }
    while digits.hasSuffix("0") { digits.removeLast() }
    return (ms < 0 && whole == 0 ? "-" : "") + String(whole) + "." + digits
  }

  /// A label value: backslash, double quote and line feed escaped.
  static func escapeLabel(_ value: String) -> String { escape(value, quotes: true) }

  /// HELP text: backslash and line feed escaped.
  static func escapeHelp(_ value: String) -> String { escape(value, quotes: false) }

  private static func escape(_ value: String, quotes: Bool) -> String {
    var escaped = ""
    for scalar in value.unicodeScalars {
      switch scalar {
      case "\\": escaped += "\\\\"
      case "\"" where quotes: escaped += "\\\""
      case "\n": escaped += "\\n"
      default: escaped.unicodeScalars.append(scalar)
      }
    }
    return escaped
  }

  /// A meta key's last part (`tokensDeleted`) as a metric name or label part (`tokens_deleted`):
  /// camelCase split at capitals, anything but letters and digits turned to `_`.
  static func snakeCase(_ name: String) -> String {
    var result = ""
    for scalar in name.unicodeScalars {
      let value = scalar.value
      if value >= 0x41 && value <= 0x5A {
        if !result.isEmpty && !result.hasSuffix("_") { result += "_" }
        result.unicodeScalars.append(Unicode.Scalar(value + 0x20)!)
      } else if (value >= 0x61 && value <= 0x7A) || (value >= 0x30 && value <= 0x39) {
        result.unicodeScalars.append(scalar)
      } else if !result.isEmpty && !result.hasSuffix("_") {
        result += "_"
      }
    }
    while result.hasSuffix("_") { result.removeLast() }
    return result
  }
}
