import Config

#if canImport(Glibc)
  import Glibc
#endif

/// `aprs-cloud import-config config.ini`: turns the original server's configuration into ours.
enum ImportConfigCommand: Command {
  static let name = "import-config"
  static let summary = "turn the original server's config.ini into an aprs-cloud configuration"
  static let usage = """
    usage: aprs-cloud import-config FILE

    Reads the config.ini of the original (Node.js) server and prints an
    aprs-cloud INI file on standard output: what has an equivalent is carried
    over, everything else is kept as a comment saying why it was dropped.
    Redirect it into a file, read it, and point the services at it.

    Carried over:
      [messaging.ios] enabled                      same key
      [messaging.ios.apns] keyFile, keyId, teamId, bundleId, production
                                                   same keys
      [messaging.android] enabled                  same key
      [messaging.android] the Firebase service-account JSON path (serviceAccount,
        serviceAccountFile, serviceAccountPath, credentials, keyFile, ... or any
        value ending in .json; also in [messaging.android.fcm] or
        [messaging.android.firebase])             [messaging.android] serviceAccountFile
      [aprsis] / [aprs-is] / [aprs] server or host + port, login or callsign,
        passcode                                   [aprsis] servers, login, passcode
      keys aprs-cloud itself knows                 as they are
    Relative paths become absolute, resolved against FILE's directory.

    Not carried over: the original server's own listening address and port
    (nginx listens now), its data files (aprs-cloud keeps its own database;
    phones re-register on their next heartbeat), and anything unknown.

    Web Push, which the original server did not have, is written as
    [messaging.webpush] enabled = false (it is on by default and needs a
    contact): set subject = mailto:you@example.org and delete that line.

    Exit status 0 when the result is a valid aprs-cloud configuration, 1 when
    FILE cannot be read or the result does not validate (it is printed anyway,
    and the reason is on standard error), 2 on wrong usage.
    """

  static func run(_ arguments: [String]) -> ExitStatus {
    runReporting(name, usage: usage) { () throws(CommandFailure) -> ExitStatus in
      let parsed = try parseArguments(arguments, options: [])
      guard parsed.positionals.count == 1 else {
        throw CommandFailure(
          parsed.positionals.isEmpty ? "FILE is missing" : "only one FILE, please", usage: true)
      }
      let path = parsed.positionals[0]
      let text = try readText(path)
      let legacy = LegacyINI(parsing: text)
      let result = ConfigImport.convert(
        legacy, sourceName: path, sourceDirectory: absoluteDirectory(of: path))
      print(result.text, terminator: "")
      for note in result.notes { printError("aprs-cloud import-config: note: \(note)") }
      if let problem = ConfigImport.validate(result.text) {
        printError("aprs-cloud import-config: the result does not validate: \(problem)")
        return .failure
      }
      return .success
    }
  }

  /// The file's text (at most 1 MiB).
  static func readText(_ path: String) throws(CommandFailure) -> String {
    let bytes: [UInt8]
    switch SmallFile.read(path) {
    case .success(let read): bytes = read
    case .failure(let failure): throw CommandFailure(failure.description)
    }
    guard let text = String(validating: bytes, as: UTF8.self) else {
      throw CommandFailure("\(path) is not UTF-8 text")
    }
    return text
  }

  /// The absolute directory of `path`.
  static func absoluteDirectory(of path: String) -> String {
    var directory = path.contains("/") ? String(path[..<path.lastIndex(of: "/")!]) : "."
    if path.hasPrefix("/") && directory.isEmpty { directory = "/" }
    if directory.hasPrefix("/") { return directory }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    guard getcwd(&buffer, buffer.count) != nil else { return directory }
    let cwd = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if directory == "." { return cwd }
    return cwd + "/" + (directory.hasPrefix("./") ? String(directory.dropFirst(2)) : directory)
  }
}

/// An INI file read leniently, in order: `[section]` lines, `key = value` (or `key: value`)
/// lines with surrounding quotes and trailing ` ;` / ` #` comments removed. Lines that are none of
/// these are kept as `unparsed` so the import can mention them.
struct LegacyINI {
  struct Entry: Equatable {
    var section: String
    var key: String
    var value: String
    var line: Int
  }

  var entries: [Entry] = []
  var unparsed: [(line: Int, text: String)] = []

  init(parsing text: String) {
    var section = ""
    var number = 0
    for raw in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
      number += 1
      var line = Self.trim(Substring(raw))
      if number == 1, line.hasPrefix("\u{FEFF}") { line = line.dropFirst() }
      if line.isEmpty || line.hasPrefix(";") || line.hasPrefix("#") { continue }
      if line.hasPrefix("["), line.hasSuffix("]") {
        section = String(Self.trim(line.dropFirst().dropLast()))
        continue
      }
      guard let separator = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else {
        unparsed.append((number, String(line)))
        continue
      }
      let key = String(Self.trim(line[..<separator]))
      guard !key.isEmpty else {
        unparsed.append((number, String(line)))
        continue
      }
      entries.append(
        Entry(
          section: section, key: key, value: Self.value(line[line.index(after: separator)...]), line: number))
    }
  }

  /// A value without its quotes, or without a trailing comment when it is not quoted.
  static func value(_ raw: Substring) -> String {
    let text = trim(raw)
    for quote in ["\"", "'"] where text.hasPrefix(quote) {
      let rest = text.dropFirst()
      if let end = rest.firstIndex(of: Character(quote)) { return String(rest[..<end]) }
    }
    var result = text
    var previous: Character = " "
    for index in text.indices {
      let character = text[index]
      if (character == ";" || character == "#") && (previous == " " || previous == "\t") {
        result = text[..<index]
        break
      }
      previous = character
    }
    return String(trim(result))
  }

  static func trim(_ text: Substring) -> Substring {
    var text = text
    while let first = text.first, first == " " || first == "\t" || first == "\r" { text = text.dropFirst() }
    while let last = text.last, last == " " || last == "\t" || last == "\r" { text = text.dropLast() }
    return text
  }
}

/// The mapping from the original server's keys to ours.
enum ConfigImport {
  struct Result {
    /// The new INI file.
    var text: String
    /// Things the operator should know, for standard error.
    var notes: [String]
  }

  /// Key names (lower case) that hold the Firebase service-account JSON path.
  static let serviceAccountKeys: Set<String> = [
    "serviceaccount", "serviceaccountfile", "serviceaccountpath", "serviceaccountkey", "serviceaccountjson",
    "serviceaccountkeyfile", "credentials", "credentialsfile", "credentialspath", "keyfile", "firebase",
    "firebaseserviceaccount", "googleapplicationcredentials", "google_application_credentials",
  ]
  /// Sections whose keys describe APRS-IS.
  static let aprsSections: Set<String> = ["aprsis", "aprs-is", "aprs_is", "aprs"]
  /// Keys that are paths (resolved against the old file's directory when relative).
  static let pathKeys: Set<String> = ["keyFile", "serviceAccountFile", "caFile"]

  /// Converts `legacy` (the file `sourceName` in `sourceDirectory`).
  static func convert(_ legacy: LegacyINI, sourceName: String, sourceDirectory: String) -> Result {
    var output: [String: [(key: String, value: String, comment: String?)]] = [:]
    var order: [String] = []
    var dropped: [String] = []
    var notes: [String] = []

    func put(_ section: String, _ key: String, _ value: String, from entry: LegacyINI.Entry) {
      if output[section] == nil { order.append(section) }
      var value = value
      var comment: String?
      if pathKeys.contains(key), !value.isEmpty, !value.hasPrefix("/") {
        value = sourceDirectory + "/" + (value.hasPrefix("./") ? String(value.dropFirst(2)) : value)
        comment = "was \(entry.value) (relative) at line \(entry.line); resolved against \(sourceDirectory)"
      }
      if let index = output[section]?.firstIndex(where: { $0.key == key }) {
        output[section]![index] = (key, value, "set again at line \(entry.line); this value wins")
      } else {
        output[section, default: []].append((key, value, comment))
      }
      if pathKeys.contains(key), access(value, R_OK) != 0 {
        notes.append("\(section).\(key) = \(value): not readable here; copy the file over or fix the path")
      }
    }
    func drop(_ entry: LegacyINI.Entry, _ reason: String) {
      let shown = looksSecret(entry.key) ? "<not shown>" : entry.value
      let place = entry.section.isEmpty ? "" : "[\(entry.section)] "
      dropped.append("line \(entry.line): \(place)\(entry.key) = \(shown): \(reason)")
    }

    var aprsHost: (host: String, entry: LegacyINI.Entry)?
    var aprsPort: String?
    for entry in legacy.entries {
      let section = entry.section
      let lowerSection = section.lowercased()
      let lowerKey = entry.key.lowercased()
      switch (lowerSection, lowerKey) {
      case ("messaging.ios", "enabled"), ("messaging.android", "enabled"):
        put(lowerSection, "enabled", entry.value, from: entry)
      case ("messaging.ios.apns", "keyfile"), ("messaging.ios.apns", "keyid"),
        ("messaging.ios.apns", "teamid"),
        ("messaging.ios.apns", "bundleid"), ("messaging.ios.apns", "production"):
        let key = ["keyfile": "keyFile", "keyid": "keyId", "teamid": "teamId", "bundleid": "bundleId"][
          lowerKey]
        put("messaging.ios.apns", key ?? "production", entry.value, from: entry)
      case ("messaging.android", _), ("messaging.android.fcm", _), ("messaging.android.firebase", _):
        if serviceAccountKeys.contains(lowerKey) || entry.value.lowercased().hasSuffix(".json") {
          put("messaging.android", "serviceAccountFile", entry.value, from: entry)
        } else if lowerKey == "projectid" || lowerKey == "project_id" {
          drop(entry, "aprs-cloud reads the project id from the service-account JSON")
        } else if ConfigSchema.all.knows(section: "messaging.android", key: entry.key) {
          put("messaging.android", entry.key, entry.value, from: entry)
        } else {
          drop(entry, "no equivalent in aprs-cloud")
        }
      case _ where aprsSections.contains(lowerSection):
        switch lowerKey {
        case "servers":
          put("aprsis", "servers", entry.value, from: entry)
        case "server", "host", "hostname":
          aprsHost = (entry.value, entry)
        case "port":
          aprsPort = entry.value
        case "login", "callsign", "call", "user", "username":
          put("aprsis", "login", entry.value, from: entry)
        case "passcode", "pass", "password":
          put("aprsis", "passcode", entry.value, from: entry)
        default:
          if ConfigSchema.all.knows(section: "aprsis", key: entry.key) {
            put("aprsis", entry.key, entry.value, from: entry)
          } else {
            drop(entry, "no equivalent in aprs-cloud")
          }
        }
      case (_, "port"), (_, "host"), (_, "listen"), (_, "bind"), (_, "address"):
        drop(entry, "nginx listens now; the responder's socket is [server] listen (see nginx/README.md)")
      case (_, let key) where key.contains("database") || key.hasPrefix("db") || key.contains("datadir"):
        drop(
          entry,
          "aprs-cloud keeps its own database ([server] database); the old data is not read, phones"
            + " re-register on their next heartbeat")
      case _ where !section.isEmpty && ConfigSchema.all.sections[section]?.contains(entry.key) == true:
        put(section, entry.key, entry.value, from: entry)
      default:
        drop(entry, "no equivalent in aprs-cloud")
      }
    }
    if let aprsHost {
      let host = aprsHost.host
      if host.contains(":") && aprsPort == nil {
        put("aprsis", "servers", host, from: aprsHost.entry)
      } else {
        put("aprsis", "servers", host + ":" + (aprsPort ?? "14580"), from: aprsHost.entry)
      }
    } else if let aprsPort {
      notes.append("an APRS-IS port (\(aprsPort)) without a host was ignored")
    }

    // Web Push is on by default and needs a contact the original server never had: the result keeps it off
    // (as the original server was) and says how to turn it on, so that it starts as it is.
    let webPush = PushConfig.webPushSection
    if !(output[webPush] ?? []).contains(where: { $0.key == "subject" || $0.key == "enabled" }) {
      if output[webPush] == nil { order.append(webPush) }
      output[webPush, default: []].append(
        (
          "enabled", "false",
          "Web Push and UnifiedPush (new): set subject = mailto:you@example.org here and delete this line"
        ))
      notes.append(
        "Web Push is off in the result ([\(webPush)] enabled = false): it needs a contact, "
          + "subject = mailto:you@example.org; set it and delete enabled = false to turn it on")
    }

    var text = "; aprs-cloud configuration, imported from \(sourceName) by `aprs-cloud import-config`.\n"
    text += "; Read it through, then save it (e.g. as /etc/aprs-cloud/aprs-cloud.ini) and point both\n"
    text += "; services at it with --config. Every key is described in docs/configuration.md.\n"
    if output.isEmpty { text += ";\n; Nothing in \(sourceName) has an aprs-cloud equivalent.\n" }
    for section in order {
      text += "\n[\(section)]\n"
      for item in output[section] ?? [] {
        if let comment = item.comment { text += "; \(comment)\n" }
        text += "\(item.key) = \(quoteIfNeeded(item.value))\n"
      }
    }
    if !dropped.isEmpty || !legacy.unparsed.isEmpty {
      text += "\n; Not carried over from \(sourceName):\n"
      for line in dropped { text += "; " + oneLine(line) + "\n" }
      for (line, raw) in legacy.unparsed {
        text += "; line \(line): " + oneLine(raw) + ": not a key = value line\n"
      }
    }
    return Result(text: text, notes: notes)
  }

  /// Why `text` is not a valid aprs-cloud configuration, or nil when it is.
  static func validate(_ text: String) -> String? {
    do throws(ConfigError) {
      let config = try ConfigFile(parsing: text, name: "the imported configuration")
      _ = try ListenerConfig(config)
      _ = try PushConfig(config)
      return nil
    } catch {
      return error.description
    }
  }

  /// Keys whose values are not echoed into comments.
  static func looksSecret(_ key: String) -> Bool {
    let lower = key.lowercased()
    return ["secret", "token", "password", "private", "apikey", "api_key"].contains { lower.contains($0) }
  }

  /// A value our INI reader takes back unchanged: quoted when it has leading or trailing spaces or
  /// starts with a quote.
  static func quoteIfNeeded(_ value: String) -> String {
    if value.hasPrefix(" ") || value.hasSuffix(" ") || value.hasPrefix("\"") || value.hasPrefix("\t") {
      return "\"" + value + "\""
    }
    return value
  }

  /// Text on one comment line (line breaks and control characters removed).
  static func oneLine(_ text: String) -> String {
    String(String.UnicodeScalarView(text.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }))
  }
}
