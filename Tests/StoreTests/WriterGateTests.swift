import Foundation
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
    for thread in 0..<threads {
      group.enter()
      Thread {
        defer { group.leave() }
        do {
          let database = try Database(path: dir.database, options: options)
          defer { database.close() }
          for write in 0..<writesEach {
            do {
              _ = try database.consumeRate(
                key: "t\(thread)-\(write)", limit: 10, windowMs: 60_000, now: Int64(1_000 + write))
            } catch {
              failures.add()
            }
          }
        } catch {
          failures.add()
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

/// A counter several threads bump.
final class LockedCounter: @unchecked Sendable {
  private let lock = NSLock()
  private var count = 0
  func add() { lock.withLock { count += 1 } }
  var value: Int { lock.withLock { count } }
}
