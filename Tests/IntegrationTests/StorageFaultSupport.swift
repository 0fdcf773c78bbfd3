import Foundation
import JSON
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A small file system of its own for one test's data directory (a tmpfs, mounted as root), which `fill()` fills
/// with `dd` as a full disk is, and `free()` frees.
final class SmallFileSystem {
  let path: String
  private var mounted = false

  /// Mounts a tmpfs of `megabytes` MiB; throws when it cannot (not root).
  init(megabytes: Int) throws {
    path = try makeTemporaryDirectory("tmpfs")
    let result = try runProcess(
      "/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0755", "tmpfs", path])
    guard result.status == 0 else {
      rmdir(path)
      throw TestFailure("cannot mount a tmpfs (this test needs root): \(result.stderrText)")
    }
    mounted = true
  }

  deinit { unmount() }

  /// Fills every free byte (`dd` until ENOSPC).
  func fill() throws {
    _ = try runProcess("/usr/bin/dd", ["if=/dev/zero", "of=\(path)/fill", "bs=4096"], timeout: 60)
    let check = try runProcess("/bin/df", ["--output=avail", "-B1", path])
    let available = Int(
      check.stdoutText.split(separator: "\n").last?.trimmingCharacters(in: .whitespaces) ?? "")
    if available != 0 { throw TestFailure("the disk is not full: \(check.stdoutText)") }
  }

  /// Frees what `fill()` took.
  func free() { unlink(path + "/fill") }

  func unmount() {
    guard mounted else { return }
    mounted = false
    _ = try? runProcess("/bin/umount", ["-l", path])
    rmdir(path)
  }
}

/// An outside write lock on a database: `BEGIN IMMEDIATE` held by a Python process (as an operator's backup
/// script might) for `seconds`.
final class HeldWriteLock {
  private let process: Process
  private let output: String

  init(database: String, seconds: Double) throws {
    let directory = try makeTemporaryDirectory("lock")
    output = directory + "/out"
    let script = """
      import sqlite3, sys, time
      c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
      c.execute('BEGIN IMMEDIATE')
      print('locked', flush=True)
      time.sleep(float(sys.argv[2]))
      c.execute('ROLLBACK')
      print('released', flush=True)
      """
    process = try TestStack.launch(
      "/usr/bin/env", ["python3", "-c", script, database, String(seconds)], output: output)
    guard waitUntil(timeout: 30, { text.contains("locked") }) else {
      throw TestFailure("the lock was not taken: \(text)")
    }
  }

  var text: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
  var isHeld: Bool { process.isRunning && !text.contains("released") }

  func release() { if process.isRunning { kill(process.processIdentifier, SIGTERM) } }
}

/// Senders on APRS-IS that retransmit as real ones do: each message again every `retryInterval` seconds while no
/// ACK came back, at most `copies` times in all. Counts what was sent and ACKed. The messages go to `stations` in
/// turn (a station keeps only its ring's last 50 messages: give it several for more).
final class RetransmittingSenders {
  struct Message {
    let msgno: String
    let line: String
    var copies = 0
    var lastSent = Date.distantPast
  }

  let fake: FakeAPRSIS
  let stations: [String]
  let retryInterval: Double
  let copies: Int
  private(set) var messages: [Message] = []
  private(set) var acked = Set<String>()
  private(set) var ackedAt: [String: Date] = [:]
  private(set) var copiesSent = 0

  init(fake: FakeAPRSIS, stations: [String], retryInterval: Double = 1, copies: Int = .max) {
    self.fake = fake
    self.stations = stations
    self.retryInterval = retryInterval
    self.copies = copies
  }

  /// `count` new messages, sent at the next `pump`.
  func add(_ count: Int) {
    for _ in 0..<count {
      let number = messages.count + 1
      messages.append(
        Message(
          msgno: String(number),
          line: messageLine(
            from: "W\(number % 7)FLT-\(number % 3 + 1)", to: stations[number % stations.count],
            text: "fault \(number)",
            msgno: String(number))))
    }
  }

  /// Reads the ACKs that went out and sends what is due.
  func pump() throws {
    for line in try fake.ackLines() {
      if let range = line.range(of: ":ack") {
        let msgno = String(line[range.upperBound...])
        if acked.insert(msgno).inserted { ackedAt[msgno] = Date() }
      }
    }
    let now = Date()
    var lines: [String] = []
    for index in messages.indices
    where !acked.contains(messages[index].msgno) && messages[index].copies < copies
      && now.timeIntervalSince(messages[index].lastSent) >= retryInterval
    {
      lines.append(messages[index].line)
      messages[index].lastSent = now
      messages[index].copies += 1
    }
    copiesSent += lines.count
    if !lines.isEmpty { _ = try fake.inject(lines) }
  }

  /// Pumps until `condition` holds or `timeout` s passed.
  @discardableResult
  func pump(timeout: Double, until condition: () throws -> Bool) throws -> Bool {
    try waitUntil(timeout: timeout, interval: 0.05) {
      try pump()
      return try condition()
    }
  }

  var allAcked: Bool { messages.allSatisfy { acked.contains($0.msgno) } }

  /// `sent / stored / ACKed / lost` for the report, `stored` being the msgnos in `database` (and `lost`: ACKed or
  /// once stored, not there now).
  func report(_ database: SQLiteFile, storedBefore: Set<String> = []) throws -> (
    stored: Set<String>, duplicates: Int, lost: Set<String>, text: String
  ) {
    let rows = try database.run(
      "SELECT msgno FROM messages WHERE station IN ('\(stations.joined(separator: "','"))')"
        + " AND direction = 'received';")
    let stored = Set(rows.split(separator: "\n").map(String.init))
    let duplicates = try database.int(
      "SELECT count(*) FROM (SELECT 1 FROM messages GROUP BY station, peer, msgno HAVING count(*) > 1)")
    let lost = acked.union(storedBefore).subtracting(stored)
    let text =
      "sent \(messages.count) (\(copiesSent) copies), stored \(stored.count), ACKed \(acked.count), lost \(lost.count)"
      + ", stored twice \(duplicates)"
    return (stored, duplicates, lost, text)
  }
}

/// `/health` of a stack: status and `error`.
func healthOf(_ baseURL: String) -> (status: Int, error: String?, text: String) {
  guard let response = try? Curl.request("GET", baseURL + "/health", timeout: 10) else { return (0, nil, "") }
  return (response.status, response.errorMessage, response.text)
}

/// The JSON body of `/v1/register` for `station`.
func registerBody(_ station: String) -> String {
  let parts = station.split(separator: "-")
  let ssid = parts.count > 1 ? String(parts[1]) : "0"
  return
    #"{"callsign":"\#(parts[0])","ssid":\#(ssid),"auth":"\#(aprsPasscode(station))","wantHistory":false,"since":0}"#
}

/// The JSON body of `/v1/sync` for `station`.
func syncBody(_ station: String, since: Int64 = 0) -> String {
  let parts = station.split(separator: "-")
  let ssid = parts.count > 1 ? String(parts[1]) : "0"
  return #"{"callsign":"\#(parts[0])","ssid":\#(ssid),"auth":"\#(aprsPasscode(station))","since":\#(since)}"#
}
