import APRS
import Config
import Logging
import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// What the inspection commands (`stations`, `messages`, `status`, `backup`) need from the
/// configuration: the database, the station expiry, the busy timeout.
///
/// `--db PATH` wins; otherwise `[server] database` from `--config FILE` (or `$APRS_CLOUD_CONFIG`,
/// or `APRS_CLOUD_SERVER_DATABASE`); otherwise the default the daemons use too (`./var/aprs-cloud.sqlite`,
/// where `make run` keeps it), named in the error when nothing is there.
struct OperatorSettings {
  var database: String
  /// The database is the built-in default (nothing named one).
  var databaseIsDefault = false
  var stationExpiryMs: Int64
  var busyTimeoutMs: Int64
  var ringSize: Int
  /// `[server] maxUnpulledPerStation`: the most a station's `retention.max` may be.
  var maxUnpulledPerStation = 500

  /// The settings for a parsed command line with `--db` and `--config` options.
  static func load(_ parsed: Arguments) throws(CommandFailure) -> OperatorSettings {
    let environment = ConfigFile.processEnvironment()
    var config: ConfigFile
    do throws(ConfigError) {
      config = try ConfigFile.load(flag: parsed.options["config"], environment: environment)
    } catch {
      throw CommandFailure(error.description)
    }
    if let database = parsed.options["db"] {
      config.override("server", "database", database, source: "command line --db")
    }
    let databaseIsDefault = config.value("server", "database") == nil
    do throws(ConfigError) {
      let server = try ServerConfig(config)
      FileModes.applyUmask(forFilesIn: FileModes.folder(of: server.database))
      return OperatorSettings(
        database: server.database, databaseIsDefault: databaseIsDefault,
        stationExpiryMs: server.stationExpiryMs,
        busyTimeoutMs: server.busyTimeoutMs,
        ringSize: server.ringSize, maxUnpulledPerStation: server.maxUnpulledPerStation)
    } catch {
      throw CommandFailure(error.description)
    }
  }

  /// Opens the existing database read-only at this build's schema version (with `checkSchema`
  /// false, at any version: a backup copies whatever is there): an inspection never creates a
  /// database where a path was mistyped, and never writes to one.
  func openReadOnly(checkSchema: Bool = true) throws(CommandFailure) -> Database {
    try open(readOnly: true, checkSchema: checkSchema)
  }

  /// Opens the existing database for writing at this build's schema version: an operator's change (a claim
  /// released) never creates a database where a path was mistyped.
  func openForWriting() throws(CommandFailure) -> Database {
    try open(readOnly: false, checkSchema: true)
  }

  private func open(readOnly: Bool, checkSchema: Bool) throws(CommandFailure) -> Database {
    var info = stat()
    guard stat(database, &info) == 0 else {
      let reason = String(cString: strerror(errno))
      throw CommandFailure(
        databaseIsDefault
          ? "no database at \(database) (the default): \(reason); give --db PATH, or --config FILE with"
            + " [server] database"
          : "no database at \(database): \(reason)")
    }
    guard info.st_mode & S_IFMT == S_IFREG else { throw CommandFailure("\(database) is not a file") }
    do throws(StoreError) {
      let opened = try Database(
        path: database,
        options: StoreOptions(
          busyTimeoutMs: Int32(clamping: busyTimeoutMs), ringSize: ringSize, readOnly: readOnly,
          maxUnpulledPerStation: maxUnpulledPerStation))
      do throws(StoreError) {
        if checkSchema { try opened.checkSchema() }
      } catch {
        opened.close()
        throw error
      }
      return opened
    } catch {
      throw CommandFailure("\(database): \(error)")
    }
  }
}

/// A command that failed: the message for stderr, and whether it was a usage mistake (exit 2).
struct CommandFailure: Error, CustomStringConvertible {
  let description: String
  let usage: Bool

  init(_ description: String, usage: Bool = false) {
    self.description = description
    self.usage = usage
  }
}

/// Closes an inspection connection. (SQLite gives the `-wal` and `-shm` files it creates the
/// database file's permission bits and, when run as root, its owner: a root `aprs-cloud status`
/// does not lock the services out.)
func closeInspected(_ database: Database) {
  database.close()
}

/// Runs `body` and maps a `CommandFailure` to the exit status and a message on stderr.
func runReporting(_ command: String, usage: String, _ body: () throws(CommandFailure) -> ExitStatus)
  -> ExitStatus
{
  do {
    return try body()
  } catch {
    if error.usage {
      printError("aprs-cloud \(command): \(error)\n\n\(usage)")
      return .usage
    }
    printError("aprs-cloud \(command): \(error)")
    return .failure
  }
}

/// Parses a command's arguments, mapping a usage error to a `CommandFailure`.
func parseArguments(_ arguments: [String], options: Set<String>, flags: Set<String> = [])
  throws(CommandFailure)
  -> Arguments
{
  do {
    return try Arguments(arguments, options: options, flags: flags)
  } catch {
    throw CommandFailure(error.description, usage: true)
  }
}

// MARK: Formatting

enum Format {
  /// `1 entry`, `3 entries`, `1 read marker`: `count` and the noun, singular or plural.
  static func count(_ count: Int, _ singular: String, _ plural: String? = nil) -> String {
    "\(count) " + (count == 1 ? singular : plural ?? singular + "s")
  }

  /// What an export document holds, as import and export report it: `57 entries, 1 read marker, 2 subscriptions`
  /// (`entries` in place of the document's count: those an import kept).
  static func contents(_ archive: StationArchive, entries: Int? = nil) -> String {
    count(entries ?? archive.entries.count, "entry", "entries") + ", "
      + count(archive.readMarkers.count, "read marker") + ", "
      + count(archive.subscriptions.count, "subscription")
  }

  /// `2026-11-29 14:00:00Z` for an epoch-millisecond time.
  static func time(_ ms: Int64) -> String {
    let stamp = Logger.timestamp(epochMs: ms)  // 2026-11-29T14:00:00.123Z
    let seconds = stamp.prefix { $0 != "." }
    return seconds.replacingFirst("T", with: " ") + "Z"
  }

  /// `time(ms)` and how long ago it was: `2026-11-29 14:00:00Z (3m ago)`.
  static func timeAndAge(_ ms: Int64, now: Int64) -> String {
    time(ms) + " (" + age(now - ms) + ")"
  }

  /// A duration in milliseconds as `45s ago`, `3m ago`, `2h ago`, `4d ago` (`in 5s` for the future).
  static func age(_ ms: Int64) -> String {
    if ms < 0 { return "in " + span(-ms) }
    return span(ms) + " ago"
  }

  /// A duration in its largest whole unit: `45s`, `3m`, `2h`, `4d`.
  static func span(_ ms: Int64) -> String {
    let seconds = ms / 1000
    if seconds < 120 { return "\(seconds)s" }
    if seconds < 7200 { return "\(seconds / 60)m" }
    if seconds < 172_800 { return "\(seconds / 3600)h" }
    return "\(seconds / 86_400)d"
  }

  /// Bytes as `512 B`, `12.3 KiB`, `4.5 MiB`, `1.2 GiB`.
  static func bytes(_ count: Int64) -> String {
    if count < 1024 { return "\(count) B" }
    let units = ["KiB", "MiB", "GiB", "TiB"]
    var value = Double(count) / 1024
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
      value /= 1024
      unit += 1
    }
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10) \(units[unit])"
  }

  /// Text safe for a terminal: control characters (C0, DEL, C1) shown as `\xNN`, so a message
  /// cannot move the cursor or change colours, and bidirectional controls as `<U+202E>`
  /// (`BidiControls.escaped`), so it cannot read differently from what it holds.
  static func printable(_ text: String) -> String {
    var result = ""
    for scalar in BidiControls.escaped(text).unicodeScalars {
      let value = scalar.value
      if value < 0x20 || value == 0x7F || (value >= 0x80 && value < 0xA0) {
        let digits = String(value, radix: 16, uppercase: true)
        result += "\\x" + (digits.count < 2 ? "0" + digits : digits)
      } else {
        result.unicodeScalars.append(scalar)
      }
    }
    return result
  }

  /// Rows as columns separated by two spaces, each as wide as its widest cell (the last one is not
  /// padded).
  static func table(_ rows: [[String]]) -> String {
    guard let columns = rows.map(\.count).max(), columns > 0 else { return "" }
    var widths = [Int](repeating: 0, count: columns)
    for row in rows {
      for (index, cell) in row.enumerated() { widths[index] = max(widths[index], cell.count) }
    }
    var text = ""
    for row in rows {
      var line = ""
      for (index, cell) in row.enumerated() {
        line += cell
        if index < row.count - 1 { line += String(repeating: " ", count: widths[index] - cell.count + 2) }
      }
      text += line + "\n"
    }
    return text
  }
}

extension Substring {
  /// This text with the first `target` replaced.
  fileprivate func replacingFirst(_ target: Character, with replacement: String) -> String {
    guard let index = firstIndex(of: target) else { return String(self) }
    return String(self[..<index]) + replacement + String(self[self.index(after: index)...])
  }
}
