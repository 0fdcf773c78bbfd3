import Foundation
import TestSupport
import Testing

@testable import Store

/// Connections sharing a `WriterGate` take turns for the write lock on the gate, so even with no
/// busy timeout at all none of them is ever refused with `.busy`.
@Suite struct WriterGateTests {
  @Test func threadsSharingAGateNeverMeetTheLock() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let gate = WriterGate()
    let options = StoreOptions(busyTimeoutMs: 0, writerGate: gate)
    try openStore(dir.database, options: options).close()
    let threads = 4
    let writesEach = 150
    let failures = LockedCounter()
    let group = DispatchGroup()
    // The connections open one after another before the threads start: opening is a read (it may meet a
    // concurrent open's WAL recovery, which a zero busy timeout cannot wait for); the gate is about writes.
    let connections = try (0..<threads).map { _ in
      HandedOver(database: try Database(path: dir.database, options: options))
    }
    for (thread, connection) in connections.enumerated() {
      group.enter()
      Thread {
        defer { group.leave() }
        let database = connection.database
        defer { database.close() }
        for write in 0..<writesEach {
          do {
            _ = try database.consumeRate(
              key: "t\(thread)-\(write)", limit: 10, windowMs: 60_000, now: Int64(1_000 + write))
          } catch {
            failures.add()
          }
        }
      }.start()
    }
    #expect(group.wait(timeout: .now() + 60) == .success)
    #expect(failures.value == 0)
    let check = try openStore(dir.database, options: options)
    defer { check.close() }
    #expect(try check.integrityCheck() == "ok")
  }
}

/// A connection opened on one thread and then used by exactly one other.
struct HandedOver: @unchecked Sendable {
  let database: Database
}

/// A counter several threads bump.
final class LockedCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  func add() { lock.withLock { count += 1 } }
  var value: Int { lock.withLock { count } }
}
