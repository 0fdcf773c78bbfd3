import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// One of the fake services of `Tests/fakes` (`push_fake.mjs`, `webpush_fake.py`, `forward_fake.py`) run for one
/// test in a folder the caller made (with the test run's credentials in it): started with `--ready-file
/// FOLDER/ready.json --max-seconds 300` after its own arguments, ready once it wrote its ports there (15 s at
/// most), its standard error in `FOLDER/fake.log`. Stopped with SIGTERM (also when it is released); the folder is
/// the caller's to remove.
public final class FakeServiceProcess: @unchecked Sendable {
  /// The fake's folder: its credentials, `ready.json` and `fake.log`.
  public let directory: String
  /// The ports the fake announced, by their names in `ready.json` (`port`, `control_port`, …).
  public let ports: [String: Int]
  private let process: Process

  /// Starts `executable` with `arguments` in `directory`. `portNames`: what `ready.json` must name. Throws with
  /// the fake's log when it did not become ready.
  public init(
    _ name: String, executable: String, arguments: [String], directory: String, portNames: [String]
  ) throws {
    self.directory = directory
    let ready = directory + "/ready.json"
    let log = directory + "/fake.log"
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments + ["--ready-file", ready, "--max-seconds", "300"]
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    _ = FileManager.default.createFile(atPath: log, contents: nil)
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    try process.run()
    self.process = process
    var announced: [String: Int]?
    let deadline = Date().addingTimeInterval(15)
    while announced == nil && Date() < deadline && process.isRunning {
      announced = Self.ports(portNames, in: ready)
      if announced == nil { usleep(20_000) }
    }
    guard let announced else {
      process.terminate()
      throw TestFailure(
        "the \(name) did not start: " + ((try? String(contentsOfFile: log, encoding: .utf8)) ?? ""))
    }
    ports = announced
  }

  deinit { stop() }

  /// The port announced as `name` (one of the `portNames` it was started with).
  public func port(_ name: String) -> Int { ports[name] ?? 0 }

  /// Stops the fake (SIGTERM) and waits for it.
  public func stop() {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
  }

  /// Every one of `names` from the ready file at `path`, nil until it holds them all.
  private static func ports(_ names: [String], in path: String) -> [String: Int]? {
    guard let data = FileManager.default.contents(atPath: path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    var found: [String: Int] = [:]
    for name in names {
      guard let port = object[name] as? Int else { return nil }
      found[name] = port
    }
    return found
  }
}
