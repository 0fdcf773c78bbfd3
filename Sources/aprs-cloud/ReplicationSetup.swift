import Config
import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// What `up`, `replicate`, `restore` and `maintenance` share about replication: the settings, the
/// Litestream executable, its generated configuration file, and Litestream's state beside the database.
enum ReplicationSetup {
  /// The configuration file named by `--config` (else `$APRS_CLOUD_CONFIG`, else none) with the
  /// environment's overrides.
  static func loadConfig(_ path: String?) throws(CommandFailure) -> ConfigFile {
    do throws(ConfigError) {
      return try ConfigFile.load(flag: path, environment: ConfigFile.processEnvironment())
    } catch {
      throw CommandFailure(error.description)
    }
  }

  /// `[replication]` of `config`.
  static func settings(_ config: ConfigFile) throws(CommandFailure) -> ReplicationConfig {
    do throws(ConfigError) {
      return try ReplicationConfig(config)
    } catch {
      throw CommandFailure(error.description)
    }
  }

  /// The Litestream executable `[replication] litestream` names: a path, or a name looked up in
  /// `$PATH` (then `/usr/local/bin` and `/usr/bin`, where upstream's package puts it).
  static func findLitestream(_ replication: ReplicationConfig) throws(CommandFailure) -> String {
    let name = replication.litestream
    if name.contains("/") {
      guard access(name, X_OK) == 0 else {
        throw CommandFailure("[replication] litestream: no executable at \(name)")
      }
      return name
    }
    guard let found = UpProcess.findExecutable(name, extraDirectories: ["/usr/local/bin", "/usr/bin"]) else {
      throw CommandFailure(
        "Litestream is not installed (no `\(name)` in $PATH): install upstream's release package "
          + "(https://github.com/benbjohnson/litestream/releases; Debian has none), "
          + "or name the binary in [replication] litestream")
    }
    return found
  }

  /// The Litestream configuration for `database` (made absolute).
  static func litestreamConfig(database: String, replication: ReplicationConfig, config: ConfigFile)
    -> LitestreamConfig
  {
    let level = (try? config.string("server", "logLevel")) ?? nil
    return LitestreamConfig(
      database: NginxFiles.absolute(database), replication: replication,
      logLevel: LitestreamConfig.logLevel(for: level ?? "info"))
  }

  /// Writes `text` to `path` with mode 0600 (it may hold the S3 secret): into a new file beside it,
  /// synced, then renamed over `path`.
  static func writePrivateFile(_ text: String, to path: String) throws(CommandFailure) {
    do throws(OwnerOnlyFile.WriteError) {
      try OwnerOnlyFile.write(Array(text.utf8), to: path, placement: .replace)
    } catch {
      throw CommandFailure("cannot write \(path): \(error.reason)")
    }
  }

  /// Litestream's own state for `database` (its position and the log segments not yet shipped): the
  /// hidden folder `.NAME-litestream` beside it. It describes that file only.
  static func stateDirectory(of database: String) -> String {
    let directory = NginxFiles.parent(of: database)
    let name = database.split(separator: "/").last.map(String.init) ?? database
    return (directory == "/" ? "" : directory) + "/." + name + "-litestream"
  }

  /// Removes `path` and everything below it (without following symbolic links); a missing path is fine.
  static func removeTree(_ path: String) throws(CommandFailure) {
    var info = stat()
    guard lstat(path, &info) == 0 else {
      if errno == ENOENT { return }
      throw CommandFailure("cannot remove \(path): \(String(cString: strerror(errno)))")
    }
    if info.st_mode & S_IFMT == S_IFDIR {
      guard let directory = opendir(path) else {
        throw CommandFailure("cannot read \(path): \(String(cString: strerror(errno)))")
      }
      var names: [String] = []
      while let entry = readdir(directory) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
          String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if name != "." && name != ".." { names.append(name) }
      }
      closedir(directory)
      for name in names { try removeTree(path + "/" + name) }
      guard rmdir(path) == 0 else {
        throw CommandFailure("cannot remove \(path): \(String(cString: strerror(errno)))")
      }
    } else if unlink(path) != 0 && errno != ENOENT {
      throw CommandFailure("cannot remove \(path): \(String(cString: strerror(errno)))")
    }
  }
}
