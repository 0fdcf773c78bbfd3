import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// Process plumbing for `aprs-cloud up`: spawning children, waiting for them and for signals.
enum UpProcess {
  /// Starts `path` with `arguments` (argv[0] is the file name) in a process group of its own (so a
  /// Ctrl-C on the terminal reaches only the supervisor, which then stops the children in order),
  /// with default signal handling, an empty signal mask and standard input from /dev/null.
  /// Standard output and error are inherited. Returns the pid, or the error text.
  static func spawn(_ path: String, _ arguments: [String]) -> Result<pid_t, UpError> {
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }

    var empty = StopSignals.set(of: [])
    var defaults = StopSignals.set(of: [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGPIPE, SIGUSR1, SIGUSR2])
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    posix_spawnattr_setpgroup(&attributes, 0)
    posix_spawnattr_setflags(
      &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)

    let argv = ([(path.split(separator: "/").last.map(String.init) ?? path)] + arguments).map { strdup($0) }
    defer { argv.forEach { free($0) } }
    var argvPointers = argv + [nil]
    var pid: pid_t = 0
    let result = posix_spawn(&pid, path, &actions, &attributes, &argvPointers, environ)
    guard result == 0 else { return .failure(UpError("\(path): \(String(cString: strerror(result)))")) }
    return .success(pid)
  }

  /// Runs `path` to completion with its output inherited; returns its decoded exit status.
  static func run(_ path: String, _ arguments: [String]) -> Result<UpExitStatus, UpError> {
    switch spawn(path, arguments) {
    case .failure(let error):
      return .failure(error)
    case .success(let pid):
      var status: Int32 = 0
      while waitpid(pid, &status, 0) == -1 {
        guard errno == EINTR else { return .failure(UpError("waitpid: \(String(cString: strerror(errno)))")) }
      }
      return .success(UpExitStatus(raw: status))
    }
  }

  /// Reaps every child that has exited, without blocking.
  static func reap() -> [(pid: pid_t, status: Int32)] {
    var reaped: [(pid: pid_t, status: Int32)] = []
    while true {
      var status: Int32 = 0
      let pid = waitpid(-1, &status, WNOHANG)
      if pid <= 0 { break }
      reaped.append((pid, status))
    }
    return reaped
  }

  /// Sends `signal` to `pid`, or to its process group. A process that is already gone is fine.
  static func send(_ signal: UpSupervisor.Signal, to pid: pid_t, group: Bool) {
    guard pid > 0 else { return }
    _ = kill(group ? -pid : pid, signal == .kill ? SIGKILL : SIGTERM)
  }

  /// Seconds on the monotonic clock.
  static func now() -> Double {
    Double(monotonicMicroseconds()) / 1e6
  }

  /// The signals the supervisor handles synchronously with `waitSignal` (blocked for normal delivery).
  static func blockSignals() -> sigset_t {
    let signals = [SIGINT, SIGTERM, SIGHUP, SIGCHLD]
    StopSignals.block(signals)
    // A health probe writing to a closed connection must not kill the supervisor.
    StopSignals.ignoreBrokenPipes()
    return StopSignals.set(of: signals)
  }

  /// Waits up to `timeout` seconds for one of the signals in `set`; returns it, or nil on timeout.
  static func waitSignal(_ set: sigset_t, timeout: Double) -> Int32? {
    var set = set
    let clamped = max(0, min(timeout, 3600))
    var time = timespec(tv_sec: Int(clamped), tv_nsec: Int((clamped - clamped.rounded(.down)) * 1e9))
    var info = siginfo_t()
    let signal = sigtimedwait(&set, &info, &time)
    return signal > 0 ? signal : nil
  }

  /// The absolute path of the running executable.
  static func executablePath() -> String? {
    var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = buffer.withUnsafeMutableBytes { readlink("/proc/self/exe", $0.baseAddress!, $0.count - 1) }
    guard count > 0 else { return nil }
    return String(decoding: buffer[..<count], as: UTF8.self)
  }

  /// The first executable file named `name` in `$PATH`, then in `extraDirectories`.
  static func findExecutable(_ name: String, extraDirectories: [String]) -> String? {
    let path = getenv("PATH").map { String(cString: $0) } ?? ""
    let directories = path.split(separator: ":").map(String.init) + extraDirectories
    for directory in directories where !directory.isEmpty {
      let candidate = directory + "/" + name
      if access(candidate, X_OK) == 0 { return candidate }
    }
    return nil
  }
}

/// A failure of `up` or `nginx-config`, with the sentence the operator sees.
struct UpError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
