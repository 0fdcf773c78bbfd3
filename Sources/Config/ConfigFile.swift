#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One INI configuration file plus its overrides, as every aprs-cloud program reads it.
///
/// ```ini
/// ; comments start a line with ';' or '#'
/// [server]
/// database = /var/lib/aprs-cloud/aprs-cloud.sqlite
/// workers = 8
///
/// [messaging.ios.apns]
/// keyFile = "AuthKey_ABC123.p8"
/// ```
///
/// A value is looked up by section and key (keys are case-sensitive: `keyFile`, `bundleId`).
/// Three layers, the later winning: the file, the environment (`APRS_CLOUD_<SECTION>_<KEY>`,
/// upper case, the section's dots turned to `_`: `APRS_CLOUD_MESSAGING_IOS_APNS_KEYFILE`), and
/// explicit overrides (command-line flags, see `override(_:_:_:source:)`). The environment is
/// passed in as a dictionary so tests use their own; `processEnvironment()` reads the real one.
///
/// The typed getters (`string`, `bool`, `int`, `duration`, `path`) validate and throw a
/// `ConfigError` that names the key and where its value came from. Sections and keys nobody
/// reads are not errors; `warnings(for:)` lists them so typos show in the log.
public struct ConfigFile: Sendable {
  /// Where a value came from.
  public enum Source: Sendable, Equatable, CustomStringConvertible {
    /// The INI file, at this line.
    case file(name: String, line: Int)
    /// The environment variable of this name.
    case environment(String)
    /// An explicit override, e.g. `command line --workers`.
    case override(String)

    public var description: String {
      switch self {
      case .file(let name, let line): "\(name) line \(line)"
      case .environment(let name): "environment \(name)"
      case .override(let label): label
      }
    }
  }

  /// A raw value and where it came from.
  public struct Value: Sendable, Equatable {
    public var text: String
    public var source: Source

    public init(text: String, source: Source) {
      self.text = text
      self.source = source
    }
  }

  /// An entry as written in the file.
  struct Entry: Sendable {
    var text: String
    var line: Int
  }

  /// The environment variable that names the config file, for programs that take no `--config`.
  public static let configPathVariable = "APRS_CLOUD_CONFIG"
  /// The prefix of every override variable.
  public static let environmentPrefix = "APRS_CLOUD_"

  /// The file's name as given (used in messages), e.g. `config.ini` or `/etc/aprs-cloud.ini`.
  public let name: String
  /// The directory relative paths in the file are resolved against; nil keeps them as written.
  public let directory: String?
  /// The environment the overrides are read from.
  public var environment: [String: String]

  var sections: [String: [String: Entry]] = [:]
  var sectionLines: [String: Int] = [:]
  var overrides: [String: [String: Value]] = [:]
  var parseWarnings: [String] = []

  /// The `name` of a configuration read from no file (`init(environment:)`).
  public static let noFileName = "(no config file)"

  /// Whether a file was read (false for `init(environment:)`: the environment and defaults only).
  public var hasFile: Bool { name != ConfigFile.noFileName }

  /// An empty configuration: only the environment and defaults apply.
  public init(environment: [String: String] = [:]) {
    self.name = ConfigFile.noFileName
    self.directory = nil
    self.environment = environment
  }

  /// Parses INI text. `name` appears in messages; `directory`, when given, is what relative
  /// paths in the file are resolved against (`load` passes the file's own directory).
  public init(
    parsing text: String, name: String = "config.ini", directory: String? = nil,
    environment: [String: String] = [:]
  ) throws(ConfigError) {
    self.name = name
    self.directory = directory
    self.environment = environment
    try parse(text)
  }

  /// Reads and parses the file at `path`. Relative paths inside it are resolved against the
  /// file's directory, so a config in `/etc/aprs-cloud/` can say `keyFile = AuthKey.p8`.
  public static func load(path: String, environment: [String: String]) throws(ConfigError) -> ConfigFile {
    let text = try readFile(path)
    return try ConfigFile(
      parsing: text, name: path, directory: ConfigFile.directoryOf(path), environment: environment)
  }

  /// The configuration an executable runs with: the file named by its `--config` flag (`path`),
  /// else by `APRS_CLOUD_CONFIG`, else none (defaults and the environment only).
  public static func load(flag path: String?, environment: [String: String]) throws(ConfigError) -> ConfigFile
  {
    let chosen = path ?? environment[configPathVariable].flatMap { $0.isEmpty ? nil : $0 }
    guard let chosen else { return ConfigFile(environment: environment) }
    return try load(path: chosen, environment: environment)
  }

  /// The process's environment variables.
  public static func processEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var cursor = environ
    while let entry = cursor.pointee {
      let pair = String(cString: entry)
      if let equals = pair.firstIndex(of: "=") {
        result[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
      }
      cursor += 1
    }
    return result
  }

  /// The override variable for a setting: `APRS_CLOUD_` + section (dots and dashes to `_`) +
  /// `_` + key, all upper case.
  public static func environmentName(section: String, key: String) -> String {
    func part(_ text: String) -> String {
      String(text.uppercased().map { $0 == "." || $0 == "-" ? "_" : $0 })
    }
    return environmentPrefix + part(section) + "_" + part(key)
  }

  // MARK: Parsing

  private mutating func parse(_ text: String) throws(ConfigError) {
    var section: String?
    var lineNumber = 0
    // "\r\n" is one Character in Swift, so split on both forms.
    let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
    for rawLine in lines {
      lineNumber += 1
      var line = Substring(rawLine)
      if lineNumber == 1, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
      line = trim(line)
      if line.isEmpty || line.hasPrefix(";") || line.hasPrefix("#") { continue }

      if line.hasPrefix("[") {
        guard line.hasSuffix("]"), line.count >= 2 else {
          throw .syntax(file: name, line: lineNumber, reason: "expected ']' at the end of the section header")
        }
        let header = String(trim(line.dropFirst().dropLast()))
        guard ConfigFile.isValidSection(header) else {
          throw .syntax(
            file: name, line: lineNumber,
            reason: "invalid section name \(ConfigError.quote(header)) "
              + "(letters, digits, '_' and '-', parts separated by '.')")
        }
        section = header
        if sectionLines[header] == nil { sectionLines[header] = lineNumber }
        if sections[header] == nil { sections[header] = [:] }
        continue
      }

      guard let equals = line.firstIndex(of: "=") else {
        throw .syntax(file: name, line: lineNumber, reason: "expected key = value")
      }
      let key = String(trim(line[..<equals]))
      guard !key.isEmpty else {
        throw .syntax(file: name, line: lineNumber, reason: "expected key = value (the key is missing)")
      }
      guard ConfigFile.isValidKey(key) else {
        throw .syntax(
          file: name, line: lineNumber,
          reason: "invalid key \(ConfigError.quote(key)) (letters, digits, '_' and '-')")
      }
      guard let current = section else {
        throw .syntax(
          file: name, line: lineNumber, reason: "\(key) is outside any section; put a [section] line above it"
        )
      }
      var value = trim(line[line.index(after: equals)...])
      if value.hasPrefix("\"") {
        guard value.count >= 2, value.hasSuffix("\"") else {
          throw .syntax(
            file: name, line: lineNumber, reason: "the quoted value of \(key) has no closing '\"'")
        }
        value = value.dropFirst().dropLast()
      }
      if let previous = sections[current]?[key] {
        parseWarnings.append(
          "\(name) line \(lineNumber): \(current).\(key) is set again; the value from line "
            + "\(previous.line) is ignored")
      }
      sections[current, default: [:]][key] = Entry(text: String(value), line: lineNumber)
    }
  }

  private func trim(_ text: Substring) -> Substring {
    var text = text
    while let first = text.first, first == " " || first == "\t" || first == "\r" { text = text.dropFirst() }
    while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
    return text
  }

  static func isValidKey(_ key: String) -> Bool {
    !key.isEmpty
      && key.utf8.allSatisfy { byte in
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
          || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
      }
  }

  static func isValidSection(_ section: String) -> Bool {
    let parts = section.split(separator: ".", omittingEmptySubsequences: false)
    return !parts.isEmpty && parts.allSatisfy { isValidKey(String($0)) }
  }

  // MARK: Lookups

  /// Sets a value above the file and the environment, e.g. from a command-line flag.
  /// `source` names it in errors (`command line --workers`).
  public mutating func override(_ section: String, _ key: String, _ text: String, source: String) {
    overrides[section, default: [:]][key] = Value(text: text, source: .override(source))
  }

  /// The raw value of `section.key` from the highest layer that has one, or nil.
  public func value(_ section: String, _ key: String) -> Value? {
    if let value = overrides[section]?[key] { return value }
    let variable = ConfigFile.environmentName(section: section, key: key)
    if let text = environment[variable] { return Value(text: text, source: .environment(variable)) }
    if let entry = sections[section]?[key] {
      return Value(text: entry.text, source: .file(name: name, line: entry.line))
    }
    return nil
  }

  /// This configuration without `dottedKey` (`server.workers`, `messaging.webpush.subject`: the key an error
  /// names) in any layer, so its default applies; nil when no layer sets it.
  public func removing(_ dottedKey: String) -> ConfigFile? {
    guard let dot = dottedKey.lastIndex(of: ".") else { return nil }
    let section = String(dottedKey[..<dot])
    let key = String(dottedKey[dottedKey.index(after: dot)...])
    guard value(section, key) != nil else { return nil }
    var copy = self
    copy.overrides[section]?[key] = nil
    copy.environment[ConfigFile.environmentName(section: section, key: key)] = nil
    copy.sections[section]?[key] = nil
    return copy
  }

  /// Whether the file has a `[section]` header.
  public func hasSection(_ section: String) -> Bool { sections[section] != nil }

  /// The sections named `<prefix>.<name>` (one name, no further dot), in the file's order: the `[apps.<id>]` an
  /// operator wrote.
  public func sections(under prefix: String) -> [String] {
    sections.keys.filter {
      $0.hasPrefix(prefix + ".") && !$0.dropFirst(prefix.count + 1).contains(".")
        && $0.count > prefix.count + 1
    }.sorted { sectionLines[$0, default: 0] < sectionLines[$1, default: 0] }
  }

  private func invalid(_ section: String, _ key: String, _ value: Value, _ reason: String) -> ConfigError {
    .invalidValue(
      key: "\(section).\(key)", value: value.text, source: value.source.description, reason: reason)
  }

  /// A string, or nil when no layer sets it. Control characters are refused.
  public func string(_ section: String, _ key: String) throws(ConfigError) -> String? {
    guard let value = value(section, key) else { return nil }
    guard !value.text.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F })
    else {
      throw invalid(section, key, value, "expected text without control characters")
    }
    return value.text
  }

  /// A string, or `defaultValue`.
  public func string(_ section: String, _ key: String, default defaultValue: String) throws(ConfigError)
    -> String
  {
    try string(section, key) ?? defaultValue
  }

  /// A string that must be one of `choices`, or `defaultValue`.
  public func choice(_ section: String, _ key: String, _ choices: [String], default defaultValue: String)
    throws(ConfigError) -> String
  {
    guard let value = value(section, key) else { return defaultValue }
    guard choices.contains(value.text) else {
      throw invalid(section, key, value, "expected one of " + choices.joined(separator: ", "))
    }
    return value.text
  }

  /// A boolean: `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0` (any case), or `defaultValue`.
  public func bool(_ section: String, _ key: String, default defaultValue: Bool) throws(ConfigError) -> Bool {
    guard let value = value(section, key) else { return defaultValue }
    guard let parsed = ConfigFile.parseBool(value.text) else {
      throw invalid(section, key, value, "expected true or false (or yes/no, on/off, 1/0)")
    }
    return parsed
  }

  /// A whole number within `range`, or `defaultValue`.
  public func int(_ section: String, _ key: String, default defaultValue: Int, range: ClosedRange<Int>)
    throws(ConfigError) -> Int
  {
    guard let value = value(section, key) else { return defaultValue }
    let expected = "expected a whole number from \(range.lowerBound) to \(range.upperBound)"
    guard let parsed = ConfigFile.parseInt(value.text) else { throw invalid(section, key, value, expected) }
    guard range.contains(parsed) else { throw invalid(section, key, value, expected) }
    return parsed
  }

  /// A duration in milliseconds within `range` (milliseconds), or `defaultValue` (milliseconds).
  /// Written `250ms`, `30s`, `5m`, `2h` or `7d`; a plain number is seconds.
  public func duration(
    _ section: String, _ key: String, default defaultValue: Int64, range: ClosedRange<Int64>
  ) throws(ConfigError) -> Int64 {
    guard let value = value(section, key) else { return defaultValue }
    guard let parsed = ConfigFile.parseDuration(value.text) else {
      throw invalid(section, key, value, "expected a duration such as 250ms, 30s, 5m, 2h or 7d")
    }
    guard range.contains(parsed) else {
      throw invalid(
        section, key, value,
        "expected a duration from \(ConfigFile.formatDuration(range.lowerBound)) to "
          + "\(ConfigFile.formatDuration(range.upperBound))")
    }
    return parsed
  }

  /// A file-system path, or nil when no layer sets it. A relative path from the file is resolved
  /// against the file's directory; from the environment or an override it stays relative to the
  /// working directory. A leading `~/` is the `HOME` of the environment.
  public func path(_ section: String, _ key: String) throws(ConfigError) -> String? {
    guard let value = value(section, key) else { return nil }
    let text = value.text
    guard !text.isEmpty else { throw invalid(section, key, value, "expected a path") }
    guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
      throw invalid(section, key, value, "expected a path without control characters")
    }
    guard text.utf8.count <= 4096 else {
      throw invalid(section, key, value, "expected a path of at most 4096 bytes")
    }
    if text.hasPrefix("~/") {
      guard let home = environment["HOME"], !home.isEmpty else {
        throw invalid(section, key, value, "cannot expand '~': HOME is not set")
      }
      return home + text.dropFirst()
    }
    if text.hasPrefix("/") { return text }
    if case .file = value.source, let directory, directory != "." {
      let relative = text.hasPrefix("./") ? String(text.dropFirst(2)) : text
      return directory.hasSuffix("/") ? directory + relative : directory + "/" + relative
    }
    return text
  }

  /// A path, or `defaultValue` (used as written).
  public func path(_ section: String, _ key: String, default defaultValue: String) throws(ConfigError)
    -> String
  {
    try path(section, key) ?? defaultValue
  }

  // MARK: Warnings

  /// Everything in the file and the environment that `schema` does not know, one sentence each,
  /// plus keys set twice. Programs log these at `warn` so typos are visible.
  public func warnings(for schema: ConfigSchema) -> [String] {
    var result = parseWarnings
    for section in sections.keys.sorted(by: { sectionLines[$0, default: 0] < sectionLines[$1, default: 0] }) {
      let line = sectionLines[section, default: 0]
      guard schema.knowsSection(section) else {
        result.append("\(name) line \(line): unknown section [\(section)] is ignored")
        continue
      }
      let entries = sections[section, default: [:]].sorted { $0.value.line < $1.value.line }
      for (key, entry) in entries where !schema.knows(section: section, key: key) {
        if let replacement = schema.retirement(section: section, key: key) {
          result.append(
            "\(name) line \(entry.line): \(key) in [\(section)] is no longer used: \(replacement)")
        } else {
          result.append("\(name) line \(entry.line): unknown key \(key) in [\(section)] is ignored")
        }
      }
    }
    let known = schema.environmentNames()
    var retired: [String: String] = [:]
    for (section, keys) in schema.retiredKeys {
      for (key, replacement) in keys {
        retired[ConfigFile.environmentName(section: section, key: key)] = replacement
      }
    }
    for variable in environment.keys.sorted() where variable.hasPrefix(ConfigFile.environmentPrefix) {
      if variable == ConfigFile.configPathVariable || known.contains(variable) { continue }
      if let replacement = retired[variable] {
        result.append("environment \(variable) is no longer used: \(replacement)")
        continue
      }
      if schema.uncheckedSections.contains(where: {
        variable.hasPrefix(ConfigFile.environmentName(section: $0, key: ""))
      }) {
        continue
      }
      result.append("environment \(variable) is not a known setting and is ignored")
    }
    return result
  }

  // MARK: Value syntax

  /// `true`/`yes`/`on`/`1` or `false`/`no`/`off`/`0`, any case; nil otherwise.
  public static func parseBool(_ text: String) -> Bool? {
    switch text.lowercased() {
    case "true", "yes", "on", "1": true
    case "false", "no", "off", "0": false
    default: nil
    }
  }

  /// A decimal whole number with an optional sign; nil otherwise (no spaces, no overflow).
  public static func parseInt(_ text: String) -> Int? {
    guard !text.isEmpty, text.utf8.count <= 20 else { return nil }
    return Int(text, radix: 10)
  }

  /// `250ms`, `30s`, `5m`, `2h`, `7d` or a plain number of seconds, in milliseconds; nil for
  /// anything else, negative or overflowing.
  public static func parseDuration(_ text: String) -> Int64? {
    let lower = text.lowercased()
    let digits = lower.prefix { $0.isASCII && $0.isNumber }
    guard !digits.isEmpty, digits.count <= 18, let number = Int64(digits) else { return nil }
    let multiplier: Int64
    switch lower.dropFirst(digits.count) {
    case "ms": multiplier = 1
    case "", "s": multiplier = 1000
    case "m": multiplier = 60_000
    case "h": multiplier = 3_600_000
    case "d": multiplier = 86_400_000
    default: return nil
    }
    let (product, overflow) = number.multipliedReportingOverflow(by: multiplier)
    return overflow ? nil : product
  }

  /// Milliseconds in the largest unit that divides them exactly: `7d`, `90m`, `250ms`.
  public static func formatDuration(_ milliseconds: Int64) -> String {
    let units: [(Int64, String)] = [(86_400_000, "d"), (3_600_000, "h"), (60_000, "m"), (1000, "s")]
    for (size, suffix) in units where milliseconds != 0 && milliseconds % size == 0 {
      return "\(milliseconds / size)\(suffix)"
    }
    return "\(milliseconds)ms"
  }

  // MARK: Files

  static func directoryOf(_ path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    if slash == path.startIndex { return "/" }
    return String(path[..<slash])
  }

  static func readFile(_ path: String) throws(ConfigError) -> String {
    switch SmallFile.read(path) {
    case .success(let bytes): return String(decoding: bytes, as: UTF8.self)
    case .failure(let failure): throw .unreadable(path: path, reason: failure.reason)
    }
  }
}
