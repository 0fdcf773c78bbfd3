import API
import CompanionFiles
import Foundation
import JSON
import Platform
import Store
import Testing

/// `/health`, `/metrics` and the API's answers when the storage fails (docs/design.md "Faults"): what the listener's
/// beacon says comes first, and a write that cannot happen is 503 with `Retry-After`, never 500.
@Suite struct StorageFaultHealthTests {
  private func health(_ api: APIFixture) -> Reply {
    Reply(api.handler.handle(APIRequest(method: "GET", path: "/health")))
  }

  /// Writes the listener's beacon beside the fixture's database, as a running listener does.
  private func beacon(_ api: APIFixture, _ change: (inout ListenerBeacon) -> Void = { _ in }) throws {
    var record = ListenerBeacon(pid: 1, monotonicMs: monotonicMilliseconds(), epochMs: api.clock.now)
    change(&record)
    let file = try ListenerBeaconFile(path: ListenerBeaconFile.path(forDatabase: api.path))
    defer { file.close() }
    #expect(file.write(record))
  }

  @Test func storeErrorsMapTo503WithRetryAfterOnceAndNever500() {
    let full = APIHandler.apiError(for: .full("database or disk is full"))
    #expect(full.status == 503)
    #expect(full.message == "cannot store: database or disk is full; retry in 30 s")
    #expect(full.headers.first { $0.name == "Retry-After" }?.value == "30")
    let busy = APIHandler.apiError(for: .busy)
    #expect(busy.status == 503 && busy.headers.first { $0.name == "Retry-After" }?.value == "1")
    for error: StoreError in [.ioError(code: 522, message: "disk I/O error"), .readOnly("attempt to write")] {
      let mapped = APIHandler.apiError(for: error)
      #expect(mapped.status == 503 && mapped.headers.contains { $0.name == "Retry-After" }, "\(error)")
    }
    #expect(APIHandler.apiError(for: .corrupt("x")).status == 500)
    #expect(APIHandler.apiError(for: .invalidArgument("x")).status == 500)
  }

  @Test func aFailingWriterIs503NamingTheCauseWithItsCounter() throws {
    let api = try APIFixture()
    #expect(try api.database.acquireLease(holder: "test", now: api.clock.now, ttlMs: 30_000))
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, receiveOnly: false))
    try beacon(api)
    let fine = health(api)
    #expect(fine.status == 200, "\(fine.text)")
    try beacon(api) {
      $0.storeFault = "database or disk is full"
      $0.storeFaultSince = api.clock.now - 3_000
      $0.failedBatches = 4
      $0.heldLines = 9
    }
    let full = health(api)
    #expect(full.status == 503)
    #expect(full.error == "cannot store messages: database or disk is full")
    #expect(full.header("Retry-After") != nil)
    guard case .object(let listener)? = full["listener"], case .object(let storage)? = listener["storage"]
    else {
      Issue.record("no listener.storage: \(full.text)")
      return
    }
    #expect(storage["failedBatches"] == .number(JSONNumber(literal: "4")))
    #expect(storage["heldLines"] == .number(JSONNumber(literal: "9")))
    #expect(storage["ok"] == .bool(false))
    #expect(storage["failingSinceSeconds"] == .number(JSONNumber(literal: "3")))
    let metrics = Reply(
      api.handler.handle(APIRequest(method: "GET", path: "/metrics", viaMetricsListener: true))
    ).text
    #expect(metrics.contains("aprs_cloud_listener_failed_batches_total 4"), "\(metrics)")
    #expect(metrics.contains("aprs_cloud_listener_storage_failing 1"))
  }

  @Test func aLeaseThatCannotBeWrittenIsNotNotRunning() throws {
    let api = try APIFixture()
    #expect(try api.database.acquireLease(holder: "test", now: api.clock.now, ttlMs: 30_000))
    try api.database.publishListenerStatus(
      ListenerStatus(state: "online", connected: true, receiveOnly: false))
    api.clock.advance(ms: 60_000)
    // No beacon: the lapsed lease says the listener is gone.
    #expect(health(api).error == "the listener is not running")
    // A fresh beacon: it runs, its lease write fails.
    try beacon(api) {
      $0.leaseFault = "the database is locked (another process holds its write lock)"
      $0.storeFault = "the database is locked (another process holds its write lock)"
    }
    let locked = health(api)
    #expect(locked.status == 503)
    #expect(
      locked.error == "cannot store messages: the database is locked (another process holds its write lock)")
    #expect(!locked.text.contains("not running"), "\(locked.text)")
    // A beacon that aged out (the listener died) no longer counts.
    try beacon(api) { $0.monotonicMs = monotonicMilliseconds() - ListenerBeacon.freshMs - 1_000 }
    #expect(health(api).error == "the listener is not running")
  }

  @Test func aDeletedDatabaseFileIsRefusedWith503() throws {
    let api = try APIFixture()
    #expect(unlink(api.path) == 0)
    let reply = api.post("/v1/sync", #"{"callsign":"N0CALL","auth":"13023","since":0}"#)
    #expect(reply.status == 503, "\(reply.text)")
    #expect(reply.error?.contains("the database file was deleted") == true)
    #expect(reply.header("Retry-After") == "5")
    #expect(health(api).status == 503)
  }
}
