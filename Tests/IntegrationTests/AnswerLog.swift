import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Every answer the integration tests get from the real stack (nginx and the real responder, never a fake
/// responder; the responder's own answers over FastCGI too), written down for the check against
/// docs/openapi.yaml (Tests/openapi/check_answers.py, run by `make test` after the integration tests).
///
/// On only when `APRS_CLOUD_ANSWER_LOG` names a folder: each test process appends one JSON line per answer to
/// `answers-<pid>.jsonl` there: `{"method", "path", "status", "headers": {lower-case name: value},
/// "body64": base64 of the body bytes}`. Only paths the document covers are kept (`/v1/…` and `/health`).
enum AnswerLog {
  private static let lock = NSLock()
  nonisolated(unsafe) private static var handle: FileHandle?
  nonisolated(unsafe) private static var opened = false

  /// Writes down `response`, the answer to `method url`, when the log is on.
  static func record(_ method: String, _ url: String, _ response: HTTPResponse) {
    guard let path = URLComponents(string: url)?.path else { return }
    record(method, path: path, status: response.status, headers: response.headers, body: response.body)
  }

  /// Writes down the responder's own answer (over FastCGI, without nginx) to `method path`.
  static func record(_ method: String, path: String, _ reply: ResponderReply) {
    record(method, path: path, status: reply.status, headers: reply.headers, body: Data(reply.body))
  }

  private static func record(
    _ method: String, path: String, status: Int, headers: [(name: String, value: String)], body: Data
  ) {
    let path = path.components(separatedBy: "?")[0]
    guard path.hasPrefix("/v1/") || path == "/health" else { return }
    var names: [String: String] = [:]
    for (name, value) in headers { names[name.lowercased()] = value }
    let record: [String: Any] = [
      "method": method, "path": path, "status": status, "headers": names,
      "body64": body.base64EncodedString(),
    ]
    guard let line = try? JSONSerialization.data(withJSONObject: record, options: [.sortedKeys]) else {
      return
    }
    lock.lock()
    defer { lock.unlock() }
    guard let file = openedFile() else { return }
    file.write(line + Data("\n".utf8))
  }

  /// The log file, opened once per process; nil when the log is off.
  private static func openedFile() -> FileHandle? {
    if opened { return handle }
    opened = true
    guard let folder = ProcessInfo.processInfo.environment["APRS_CLOUD_ANSWER_LOG"], !folder.isEmpty else {
      return nil
    }
    try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let path = folder + "/answers-\(getpid()).jsonl"
    if !FileManager.default.fileExists(atPath: path) {
      _ = FileManager.default.createFile(atPath: path, contents: nil)
    }
    handle = FileHandle(forWritingAtPath: path)
    handle?.seekToEndOfFile()
    return handle
  }
}
