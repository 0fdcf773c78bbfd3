import Foundation
import JSON
import Store
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

func removeDirectory(_ path: String) {
  try? FileManager.default.removeItem(atPath: path)
}

/// A folder for files shared by every test of this run (keys, certificates), removed at exit.
let sharedScratchDirectory: String = {
  let path = try! makeTemporaryDirectory("push-shared")
  atexit { try? FileManager.default.removeItem(atPath: sharedScratchDirectory) }
  return path
}()

/// A new folder inside `sharedScratchDirectory`.
func makeSharedDirectory(_ name: String) -> String {
  let path = sharedScratchDirectory + "/" + name
  try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

/// The result of a finished process.
struct ProcessResult {
  var status: Int32
  var stdout: String
  var stderr: String
}

/// Runs a program to completion (killed after `timeout` seconds), output captured in files.
@discardableResult
func runProgram(_ path: String, _ arguments: [String], input: Data? = nil, timeout: Double = 30) throws
  -> ProcessResult
{
  let directory = try makeTemporaryDirectory("push-run")
  defer { removeDirectory(directory) }
  let outPath = directory + "/out"
  let errPath = directory + "/err"
  _ = FileManager.default.createFile(atPath: outPath, contents: nil)
  _ = FileManager.default.createFile(atPath: errPath, contents: nil)
  let process = Process()
  process.executableURL = URL(fileURLWithPath: path)
  process.arguments = arguments
  if let input {
    let inPath = directory + "/in"
    _ = FileManager.default.createFile(atPath: inPath, contents: input)
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: inPath))
  } else {
    process.standardInput = FileHandle.nullDevice
  }
  process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
  process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
  try process.run()
  let deadline = Date().addingTimeInterval(timeout)
  while process.isRunning && Date() < deadline { usleep(2000) }
  if process.isRunning {
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    throw TestFailure("\(path) \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
  }
  process.waitUntilExit()
  return ProcessResult(
    status: process.terminationStatus,
    stdout: String(decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self),
    stderr: String(decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self))
}

/// The package root, from this file's path.
let packageRoot: String = {
  var url = URL(fileURLWithPath: #filePath)
  for _ in 0..<3 { url.deleteLastPathComponent() }
  return url.path
}()

/// A database at `path`, migrated.
func openMigrated(_ path: String, ringSize: Int = 50) throws -> Database {
  let database = try Database(path: path, options: StoreOptions(ringSize: ringSize))
  try database.migrate()
  return database
}

/// Registers a station (CALL or CALL-SSID) with an optional device.
@discardableResult
func registerStation(
  _ database: Database, _ address: String, platform: DevicePlatform? = .android, token: String? = nil,
  keyed: Bool = false, now: Int64
) throws -> StationRecord {
  let parts = address.split(separator: "-", maxSplits: 1)
  return try database.upsertStation(
    StationUpsert(
      address: address, base: String(parts[0]), ssid: parts.count > 1 ? Int(parts[1]) ?? 0 : 0,
      platform: platform, pushToken: token, ackMessages: false, isRegistration: true, keyed: keyed),
    now: now)
}

/// A received message for `station` from `peer`.
func message(_ station: String, _ text: String, from peer: String = "KJ7ABC-7", msgno: String? = nil)
  -> IncomingMessage
{
  IncomingMessage(
    station: station, peer: peer, text: text, msgno: msgno,
    dedupKey: "\(peer)>\(station):\(msgno ?? ""):\(text):\(UUID().uuidString)", dedupWindowMs: 3_600_000)
}

/// An object member of a parsed JSON document, or a test failure.
func object(_ value: JSONValue?, _ what: String = "value") throws -> JSONObject {
  guard case .object(let object)? = value else {
    throw TestFailure("\(what) is not an object: \(String(describing: value))")
  }
  return object
}

/// A string member, or nil.
func string(_ value: JSONValue?) -> String? {
  if case .string(let text)? = value { return text }
  return nil
}

/// Parses bytes as a JSON object.
func parseObject(_ bytes: [UInt8]) throws -> JSONObject {
  try object(try JSONParser.parse(bytes, maxDepth: 32), "document")
}
