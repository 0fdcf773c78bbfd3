// Store tests are named after the file they test: `Sources/Store/Database+X.swift` → `DatabaseXTests.swift`
// (`Database.swift` → `DatabaseTests.swift`).
import Foundation
import TestSupport
import Testing

@testable import Store

/// `Database.swift`: opening a connection (its pragmas, typed errors), read-only and closed connections, the
/// data version.
@Suite struct DatabaseTests {
  @Test func everyConnectionHasItsPragmas() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let creator = try openStore(dir.database)
    creator.close()
    let database = try Database(path: dir.database, options: StoreOptions(busyTimeoutMs: 1234))
    defer { database.close() }
    let settings = try database.connectionSettings()
    #expect(settings.journalMode == "wal")
    #expect(settings.synchronous == 1)
    #expect(settings.foreignKeys)
    #expect(settings.busyTimeoutMs == 1234)
    let defaults = try Database(path: dir.database)
    defer { defaults.close() }
    #expect(try defaults.connectionSettings().busyTimeoutMs == 5000)
    // A writer that promises something after its commits (the listener's ACKs) syncs each one.
    let full = try Database(path: dir.database, options: StoreOptions(synchronous: .full))
    defer { full.close() }
    #expect(try full.connectionSettings().synchronous == SynchronousMode.full.level)
    #expect(SynchronousMode.full.level == 2 && SynchronousMode.normal.level == 1)
    #expect(try defaults.connectionSettings().synchronous == 1, "the others stay at NORMAL")
    // Foreign keys are enforced, not just reported.
    #expect(throws: StoreError.self) {
      try defaults.execute(
        "INSERT INTO devices (token, station, platform, registered_at, refreshed_at) VALUES ('t', 'NOPE', 'ios', 1, 1)"
      )
    }
  }

  @Test func unopenableAndCorruptFilesGiveTypedErrors() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    #expect {
      try Database(path: dir.path + "/missing/dir/store.sqlite")
    } throws: { error in
      guard case StoreError.cannotOpen(let path, _) = error else { return false }
      return path.hasSuffix("missing/dir/store.sqlite")
    }
    #expect {
      try Database(path: dir.path + "/absent.sqlite", options: StoreOptions(readOnly: true))
    } throws: { error in
      if case StoreError.cannotOpen = error { return true } else { return false }
    }
    let garbage = dir.path + "/garbage.sqlite"
    try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: garbage))
    #expect {
      try Database(path: garbage)
    } throws: { error in
      if case StoreError.corrupt = error { return true } else { return false }
    }
  }

  @Test func readOnlyConnectionReadsButRefusesWrites() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let writer = try openStore(dir.database)
    defer { writer.close() }
    try register(writer, "N0CALL")
    let reader = try Database(path: dir.database, options: StoreOptions(readOnly: true))
    defer { reader.close() }
    #expect(try reader.station("N0CALL") != nil)
    #expect(try reader.sync(station: "N0CALL", since: 0, now: 5).serverTime == 0)
    #expect {
      try register(reader, "K1ABC")
    } throws: { error in
      if case StoreError.readOnly = error { return true } else { return false }
    }
  }

  @Test func closedConnectionThrows() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let database = try openStore(dir.database)
    database.close()
    database.close()
    #expect(throws: StoreError.closed) { try database.station("N0CALL") }
  }

  @Test func dataVersionMovesWhenAnotherConnectionCommits() throws {
    let dir = try TempDirectory()
    defer { dir.remove() }
    let listener = try openStore(dir.database)
    defer { listener.close() }
    let responder = try openStore(dir.database)
    defer { responder.close() }
    let before = try listener.dataVersion()
    #expect(try listener.dataVersion() == before)
    try register(responder, "N0CALL")
    #expect(try listener.dataVersion() != before)
  }
}
