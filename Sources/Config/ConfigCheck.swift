/// What `aprs-cloud check-config FILE` finds in a configuration: every error that would stop a program from
/// starting and every warning it would log, without starting anything.
///
/// Each part is read as its program reads it: `[server]` and `[send]` as the responder (``ServerConfig``),
/// `[aprsis]`, `[listener]` and `[replication]` as the listener (``ListenerConfig``), `[messaging…]` as the push
/// sender (``PushConfig``). A program stops at its first error; the check reads a part again with that key left
/// at its default, so one run lists every bad key. Warnings: keys and sections no program knows, keys set twice,
/// retired keys (``ConfigFile/warnings(for:)``), and features left off by a setting they lack
/// (``PushConfig/warnings``). The caller adds what needs other modules (the passcode check, `allowedOrigins`).
public struct ConfigCheck: Sendable, Equatable {
  /// One sentence each; any of them stops a program from starting (it exits 2).
  public var errors: [String] = []
  /// One sentence each; the programs start and log them.
  public var warnings: [String] = []
  /// The listener's settings, the keys in error left at their defaults (for checks that need them).
  public var listener: ListenerConfig?
  /// The responder's settings, the keys in error left at their defaults (for checks that need other modules: the
  /// `allowedOrigins` syntax is the API module's).
  public var server: ServerConfig?

  /// The exit status of `check-config`: 0 when the programs start (no errors; warnings only are still 0, as
  /// `nginx -t` exits 0 on warnings, so a deploy script that stops on a non-zero status stops only for what
  /// would stop the service), 2 for errors (the status the daemons exit with on a bad configuration; systemd's
  /// `RestartPreventExitStatus=2` keeps them stopped until the file is fixed). The warnings are printed either
  /// way.
  public var exitStatus: Int32 { errors.isEmpty ? 0 : 2 }

  /// Reads `config` as every program would.
  public init(_ config: ConfigFile) {
    var errors: [String] = []
    // The listener reads [server] too: its error is listed once.
    func failed(_ error: ConfigError) {
      if !errors.contains(error.description) { errors.append(error.description) }
    }
    server = Self.readAll(config, failed) { config throws(ConfigError) in try ServerConfig(config) }
    listener = Self.readAll(config, failed) { config throws(ConfigError) in try ListenerConfig(config) }
    if listener?.isReceiveOnly == true {
      warnings.append(
        "receive-only: no [aprsis] login and passcode; messages are stored and pushed but never ACKed")
    }
    if let push = Self.readAll(config, failed, { config throws(ConfigError) in try PushConfig(config) }) {
      warnings += push.warnings
      if let subject = push.webPush?.subject, let host = PushConfig.WebPush.localContactHost(subject) {
        warnings.append(
          "[messaging.webpush] subject \(subject) is on a local name (\(host)): Apple's push service refuses"
            + " every push with it (403 BadJwtToken); set a real mailto: or https:// contact")
      }
    }
    self.errors = errors
    warnings = config.warnings(for: .all) + warnings
  }

  /// Reads one program's part, and after an error reads it again with the key in error left at its default, so
  /// that every bad key is reported, not the first alone (at most 64 rounds; an error naming no key the file
  /// sets, such as a missing one, ends it). Returns the part read with those defaults, nil when it never read.
  static func readAll<Part>(
    _ config: ConfigFile, _ failed: (ConfigError) -> Void, _ read: (ConfigFile) throws(ConfigError) -> Part
  ) -> Part? {
    var current = config
    for _ in 0..<64 {
      do throws(ConfigError) {
        return try read(current)
      } catch {
        failed(error)
        guard let key = error.key, let next = current.removing(key) else { return nil }
        current = next
      }
    }
    return nil
  }
}
