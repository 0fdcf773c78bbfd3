/// What `aprs-cloud check-config FILE` finds in a configuration: every error that would stop a program from
/// starting and every warning it would log, without starting anything.
///
/// Each part is read as its program reads it: `[server]` and `[send]` as the responder (``ServerConfig``),
/// `[aprsis]`, `[listener]` and `[replication]` as the listener (``ListenerConfig``), `[messaging…]` as the push
/// sender (``PushConfig``). A part stops at its first error, as its program would, and the other parts are still
/// read, so one run lists an error per part. Warnings: keys and sections no program knows, keys set twice,
/// retired keys (``ConfigFile/warnings(for:)``), and features left off by a setting they lack
/// (``PushConfig/warnings``). The caller adds what needs other modules (the passcode check, `allowedOrigins`).
public struct ConfigCheck: Sendable, Equatable {
  /// One sentence each; any of them stops a program from starting (it exits 2).
  public var errors: [String] = []
  /// One sentence each; the programs start and log them.
  public var warnings: [String] = []
  /// The listener's settings when they read without error (for checks that need them).
  public var listener: ListenerConfig?
  /// The responder's settings when they read without error (for checks that need other modules: the
  /// `allowedOrigins` syntax is the API module's).
  public var server: ServerConfig?

  /// The exit status of `check-config`: 0 nothing to say, 1 warnings only (everything starts), 2 errors (the
  /// status the daemons exit with on a bad configuration; systemd's `RestartPreventExitStatus=2` keeps them
  /// stopped until the file is fixed).
  public var exitStatus: Int32 { errors.isEmpty ? (warnings.isEmpty ? 0 : 1) : 2 }

  /// Reads `config` as every program would.
  public init(_ config: ConfigFile) {
    var errors: [String] = []
    // The listener reads [server] too: its error is listed once.
    func failed(_ error: ConfigError) {
      if !errors.contains(error.description) { errors.append(error.description) }
    }
    do throws(ConfigError) { server = try ServerConfig(config) } catch { failed(error) }
    do throws(ConfigError) {
      let listener = try ListenerConfig(config)
      self.listener = listener
      if listener.isReceiveOnly {
        warnings.append(
          "receive-only: no [aprsis] login and passcode; messages are stored and pushed but never ACKed")
      }
    } catch {
      failed(error)
    }
    do throws(ConfigError) {
      warnings += try PushConfig(config).warnings
    } catch {
      failed(error)
    }
    self.errors = errors
    warnings = config.warnings(for: .all) + warnings
  }
}
