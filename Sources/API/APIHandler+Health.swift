import CompanionFiles
import JSON
import Platform
import Store

extension APIHandler {
  /// How many fell-back stations `/health` names (the count is always whole).
  static let fellBackListed = 50

  /// `GET /health`: 200 with a small JSON object when the database answers and the listener is
  /// running; 503 with `error` when the database does not answer, or when a listener has run on this
  /// database (its lease or its published state is there) but its lease has lapsed (it stopped or
  /// died; a lease lives 30 s). A database no listener ever ran on (a responder-only setup, or the
  /// seconds before the listener starts) is not held against the responder.
  ///
  /// `status` is `ok`, or `degraded` with the reasons in `degraded`: the listener is not running, it
  /// is not connected to APRS-IS, its login is unverified or receive-only (no ACKs), its transmit budget for sent
  /// messages is spent, a push provider
  /// stopped on a configuration fault, or one that published a warning: one that sends (an APNs `production`
  /// setting the devices' tokens contradict) or one left off by a missing setting (Web Push without `subject`:
  /// the key and the fix).
  ///
  /// `listener`: `running` (its lease is held), `connected` (logged in to APRS-IS, as last published by a running
  /// listener), `lastLineAgeSeconds`, and, once a listener has published them: `state`, `verified`,
  /// `receiveOnly` (nothing it sends gets through: no login, or an unverified one; ACKs are off), `server`,
  /// `login`, `lastError` (why its last attempt to connect failed or its last connection ended, null once it
  /// logged in again), `filterSize` (registered stations the filter covers), `filterBytes` (its one `#filter` line's
  /// length, CR LF included), `filterEntries` (entries on that line), `filterExactStations` (stations matched
  /// by an exact entry rather than a prefix), `ownTransmissions` (`followed`: how many stations' own transmissions
  /// the filter follows, settings `ackPolicy:"fallback"` and `trackSent`; `fellBack`: the first
  /// ``fellBackListed`` of those it had no room for, oldest request first, ACKed as under `server`;
  /// `fellBackCount`: all of them), `lineRate` (lines per second over the last minute),
  /// `updatedAgeSeconds`, and `counters` since it started (each `ListenerCounter`, by name).
  ///
  /// `send`: `budgetFull`, true while a running listener's transmit budget (`[send] transmitBudgetPerMinute`) is
  /// spent and copies of sent messages wait their turn; a degraded reason too, but not a 503 (nothing is lost,
  /// the copies only go out later).
  ///
  /// What the running listener says through its beacon (``CompanionFiles/ListenerBeacon``, a file that needs neither disk
  /// space nor the write lock, written every second) comes first: while its batches cannot be stored, 503 with
  /// `error` `cannot store messages: <cause>` (`database or disk is full`, `the database is locked …`, the I/O
  /// error) from the first failed batch on; while the database file was deleted or replaced under it, 503 with that.
  /// A fresh beacon also says that the listener runs when its lease lapsed because the lease itself cannot be
  /// written (then a degraded reason names why): "not running" only when the listener really is not. `listener`
  /// then has `alive` and `storage`: `ok`, `error` (null while storing works), `failingSinceSeconds`,
  /// `failedBatches` (attempts that failed since it started), `heldLines` (read, not stored yet) and
  /// `droppedLines` (dropped oldest first because the queue was full while storing failed).
  func health() -> APIResponse {
    let now = clock()
    do {
      let version = try database.schemaVersion()
      let verdict = try healthVerdict(now: now)
      let (listener, push, beacon, running) = (
        verdict.listener, verdict.push, verdict.beacon, verdict.running
      )
      let (problems, degraded, budgetFull) = (verdict.problems, verdict.degraded, verdict.budgetFull)
      var writer = JSONWriter(capacity: 512)
      writer.beginObject()
      if let problem = problems.first {
        writer.key("error")
        writer.string(
          problem.hasPrefix("the listener is not running") ? "the listener is not running" : problem)
      }
      writer.key("status")
      writer.string(verdict.status)
      writer.key("degraded")
      writer.beginArray()
      for reason in degraded { writer.string(reason) }
      writer.endArray()
      writer.key("database")
      writer.string("ok")
      writer.key("schemaVersion")
      writer.int(version)
      writer.key("listener")
      writer.beginObject()
      writer.key("running")
      writer.bool(running)
      writer.key("connected")
      writer.bool(running && listener.connected)
      writer.key("alive")
      writer.bool(beacon != nil)
      if let beacon { writeStorage(beacon, now: now, to: &writer) }
      writer.key("lastLineAgeSeconds")
      if let lastLine = listener.lastLineAt {
        writer.int(max(0, now - lastLine) / 1000)
      } else {
        writer.null()
      }
      if let state = listener.state {
        writer.key("state")
        writer.string(running ? state : "stopped")
        writer.key("verified")
        writer.bool(listener.verified)
        writer.key("receiveOnly")
        writer.bool(listener.receiveOnly)
        for (key, value) in [
          ("server", listener.server), ("login", listener.login), ("lastError", listener.lastError),
        ] {
          writer.key(key)
          if let value { writer.string(value) } else { writer.null() }
        }
        for (key, value) in [
          ("filterSize", listener.filterSize), ("filterBytes", listener.filterBytes),
          ("filterEntries", listener.filterEntries), ("filterExactStations", listener.filterExactStations),
        ] {
          writer.key(key)
          writer.int(value)
        }
        writer.key("ownTransmissions")
        writer.beginObject()
        writer.key("followed")
        writer.int(listener.ownFollowed.count)
        writer.key("fellBack")
        writer.beginArray()
        for station in listener.ownFellBack.prefix(Self.fellBackListed) { writer.string(station) }
        writer.endArray()
        writer.key("fellBackCount")
        writer.int(listener.ownFellBack.count)
        writer.endObject()
        writer.key("lineRate")
        writer.value(.number(JSONNumber(literal: ListenerStatus.decimal(listener.lineRate))))
        writer.key("updatedAgeSeconds")
        if let updated = listener.updatedAt {
          writer.int(max(0, now - updated) / 1000)
        } else {
          writer.null()
        }
        writer.key("counters")
        writer.beginObject()
        for counter in ListenerCounter.allCases {
          writer.key(counter.rawValue)
          writer.int(listener.counts[counter])
        }
        writer.endObject()
      }
      writer.endObject()
      // Sending: whether the running listener's transmit budget is spent (copies are waiting).
      writer.key("send")
      writer.beginObject()
      writer.key("budgetFull")
      writer.bool(budgetFull)
      writer.endObject()
      // What the push sender last published per provider: ok, off or "stopped: <reason>".
      writer.key("push")
      writer.beginObject()
      for platform in DevicePlatform.allCases {
        writer.key(platform.rawValue)
        writer.string(push.state(of: platform).description)
      }
      writer.endObject()
      writer.endObject()
      var response = APIResponse.ok(writer)
      if !problems.isEmpty {
        response.status = 503
        response.headers = [("Retry-After", "10")]
      }
      return response
    } catch {
      return .error(.unavailable("the database does not answer"))
    }
  }

  /// What `/health` concludes, read once: `/health` writes it as JSON and the status page (`/status`) shows it.
  struct HealthVerdict {
    var listener: ListenerStatus
    var push: PushStatus
    /// The listener's fresh beacon, nil when it is stale or missing.
    var beacon: ListenerBeacon?
    /// The listener holds its lease, or its fresh beacon says it runs.
    var running: Bool
    /// What makes `/health` a 503 (storing fails, the database file changed, the listener is not running).
    var problems: [String]
    /// Every reason for `degraded`, the problems first.
    var degraded: [String]
    /// A running listener's transmit budget is spent.
    var budgetFull: Bool

    /// `ok` or `degraded`.
    var status: String { degraded.isEmpty ? "ok" : "degraded" }
  }

  /// Reads the lease, the listener's and the push sender's published state and the beacon, and decides.
  func healthVerdict(now: Int64) throws(StoreError) -> HealthVerdict {
    let lease = try database.lease()
    let listener = try database.listenerStatus()
    let push = try database.pushStatus()
    let beacon = listenerBeacon()
    let leaseHeld = lease.map { $0.expiresAt > now } ?? false
    let running = leaseHeld || beacon != nil
    let listenerExpected = lease != nil || listener.state != nil
    var problems: [String] = []
    if let change = beacon?.databaseFile {
      problems.append("\(change) under the running listener; it is restarting on the file the path names")
    }
    if let fault = beacon?.storeFault { problems.append("cannot store messages: \(fault)") }
    if listenerExpected && !running { problems.append("the listener is not running (its lease lapsed)") }
    var degraded = problems
    if running && !leaseHeld {
      degraded.append(
        "the listener runs but cannot renew its lease" + (beacon?.leaseFault.map { ": \($0)" } ?? ""))
    } else if running && !listener.connected {
      degraded.append(
        "the listener is not connected to APRS-IS"
          + (listener.lastError.map { " (last error: \($0))" } ?? ""))
    }
    if running && listener.receiveOnly {
      degraded.append("the APRS-IS login is receive-only or unverified: nothing is ACKed")
    }
    let budgetFull = running && listener.sendBudgetFull
    if budgetFull {
      degraded.append(
        "the transmit budget for sent messages ([send] transmitBudgetPerMinute) is spent: due copies wait"
          + " their turn")
    }
    for platform in DevicePlatform.allCases {
      if case .stopped = push.state(of: platform) {
        degraded.append("push for \(platform.rawValue) is \(push.state(of: platform))")
      } else if let warning = push.warnings[platform] {
        degraded.append("push for \(platform.rawValue): \(warning)")
      }
    }
    return HealthVerdict(
      listener: listener, push: push, beacon: beacon, running: running, problems: problems,
      degraded: degraded,
      budgetFull: budgetFull)
  }

  /// The running listener's beacon when it is fresh (``CompanionFiles/ListenerBeacon/isFresh(monotonicNow:)``), else nil.
  func listenerBeacon() -> ListenerBeacon? {
    guard let beacon = ListenerBeaconFile.read(path: ListenerBeaconFile.path(forDatabase: database.path)),
      beacon.isFresh(monotonicNow: monotonicMilliseconds())
    else { return nil }
    return beacon
  }

  /// `storage`: whether the running listener can store what it reads, from its beacon.
  private func writeStorage(_ beacon: ListenerBeacon, now: Int64, to writer: inout JSONWriter) {
    writer.key("storage")
    writer.beginObject()
    writer.key("ok")
    writer.bool(beacon.storeFault == nil)
    writer.key("error")
    if let fault = beacon.storeFault { writer.string(fault) } else { writer.null() }
    writer.key("failingSinceSeconds")
    if let since = beacon.storeFaultSince { writer.int(max(0, now - since) / 1000) } else { writer.null() }
    writer.key("failedBatches")
    writer.int(beacon.failedBatches)
    writer.key("heldLines")
    writer.int(beacon.heldLines)
    writer.key("droppedLines")
    writer.int(beacon.droppedLines)
    writer.endObject()
  }
}
