#if canImport(Glibc)
  import Glibc
#endif

/// A child process started with `posix_spawn`, for tests that run programs (curl, nginx, the daemons).
///
/// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` with a 256-byte copy of each `dirent`
/// and now and then crashes the whole test process with a bad pointer dereference (swift-corelibs-foundation
/// pull request 5472, fixed after Swift 6.3.1). Here the child gets its standard input, output and error from
/// the paths given and no other descriptor of the test process (`closefrom` 3).
public struct SpawnedProcess: Sendable {
  /// The child's process id.
  public let pid: pid_t

  /// Starts `path` with `arguments` (without the program name) and `environment` (nil: the test process's),
  /// standard input from `stdin`, output to `stdout` and errors to `stderr` (files opened for writing,
  /// truncated). Throws when the program cannot be started.
  public init(
    _ path: String, _ arguments: [String], environment: [String: String]? = nil, stdin: String = "/dev/null",
    stdout: String, stderr: String
  ) throws(TestFailure) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, stdin, O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, stdout, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    if let closeFrom = Self.addCloseFrom { _ = closeFrom(&actions, 3) }
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    let environmentStrings: [String]
    if let environment {
      environmentStrings = environment.map { "\($0.key)=\($0.value)" }
    } else {
      var inherited: [String] = []
      var cursor = environ
      while let entry = cursor.pointee {
        inherited.append(String(cString: entry))
        cursor += 1
      }
      environmentStrings = inherited
    }
    let envp = environmentStrings.map { strdup($0) } + [nil]
    defer { for pointer in envp { free(pointer) } }
    var child: pid_t = 0
    let result = posix_spawn(&child, path, &actions, nil, argv, envp)
    guard result == 0 else {
      throw TestFailure("cannot start \(path): \(String(cString: strerror(result)))")
    }
    pid = child
  }

  /// Waits up to `timeoutSeconds` for the child to end: its exit status (the signal's number when a signal
  /// ended it, as Foundation's `terminationStatus`), or nil when it still runs.
  public func wait(timeoutSeconds: Double) -> Int32? {
    let deadline = Self.now() + timeoutSeconds
    var delay: useconds_t = 200
    while true {
      var status: Int32 = 0
      let reaped = waitpid(pid, &status, WNOHANG)
      if reaped == pid {
        let signal = status & 0x7F
        return signal == 0 ? (status >> 8) & 0xFF : signal
      }
      if reaped < 0 && errno != EINTR { return -1 }
      if Self.now() >= deadline { return nil }
      usleep(delay)
      delay = min(delay * 2, 5_000)
    }
  }

  /// Kills the child (SIGKILL) and reaps it.
  public func kill() {
    _ = Glibc.kill(pid, SIGKILL)
    var status: Int32 = 0
    _ = waitpid(pid, &status, 0)
  }

  /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; Swift's Glibc module does not export
  /// it), looked up once.
  private static let addCloseFrom:
    (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
      guard
        let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
      else { return nil }
      return unsafeBitCast(
        symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

  private static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }
}
