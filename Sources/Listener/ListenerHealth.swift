import CompanionFiles
import Platform
import Store
import Synchronization

/// What is wrong with the listener right now, as the writer, the housekeeper and the file watch find it, for the
/// beacon (``ListenerBeacon``, read by `/health` and `/metrics` without the database) and the log. Every thread
/// may update it; a change wakes the beacon thread (``wait(untilMs:)``) so `/health` knows within a moment.
final class ListenerHealth: @unchecked Sendable {
  struct State: Equatable {
    var storeFault: String?
    var storeFaultSince: Int64?
    var heldLines = 0
    var droppedLines = 0
    var leaseFault: String?
    var databaseChange: DatabaseFileChange?
    /// When the writer's current attempt began (monotonic ms), nil between attempts.
    var attemptStartedAt: Int64?
  }

  /// An attempt that has not returned after this long (ms) is reported as a fault before it fails: a held lock
  /// keeps it in SQLite's busy wait for the whole `busyTimeout` (5 s by default).
  static let stalledAttemptMs: Int64 = 2_000

  private let condition = Condition()
  private var state = State()
  private var changed = false
  /// Set once the database file was deleted or replaced: from then on nothing is ACKed (read without a lock).
  private let fileChanged = Atomic<Bool>(false)

  init() {}

  /// What it says now.
  var snapshot: State { condition.locked { state } }

  /// Whether the database file was deleted or replaced under the listener (then nothing may be ACKed any more).
  var databaseFileChanged: Bool { fileChanged.load(ordering: .acquiring) }

  /// A batch could not be stored (`fault`: what `/health` says), `now` epoch ms.
  func storeFailed(_ fault: String, now: Int64, heldLines: Int) {
    update {
      if $0.storeFaultSince == nil { $0.storeFaultSince = now }
      $0.storeFault = fault
      $0.heldLines = heldLines
    }
  }

  /// Storing works (again); `heldLines` still wait (a backlog being written).
  func storeWorks(heldLines: Int) {
    update {
      $0.storeFault = nil
      $0.storeFaultSince = nil
      $0.heldLines = heldLines
    }
  }

  /// The writer begins (`at`: monotonic ms) or ended (nil) an attempt to store a batch (no wake-up).
  func attempt(startedAt: Int64?) {
    condition.locked { state.attemptStartedAt = startedAt }
  }

  /// What `/health` says of storing at `monotonicNow`: the last failure, or an attempt that has waited longer
  /// than ``stalledAttemptMs`` (then the cause is not known yet: the lock or the disk).
  static func storeFault(_ state: State, monotonicNow: Int64) -> String? {
    if let fault = state.storeFault { return fault }
    guard let started = state.attemptStartedAt, monotonicNow - started >= stalledAttemptMs else { return nil }
    return
      "storing a batch has waited \((monotonicNow - started) / 1000) s for the database (its write lock is"
      + " held by another process, or the disk stalls)"
  }

  /// Lines held for storing (no wake-up: the next beacon shows it).
  func held(_ lines: Int) {
    condition.locked { state.heldLines = lines }
  }

  /// The oldest held lines were dropped (the queue was full while storing failed).
  func dropped(_ lines: Int) {
    update { $0.droppedLines += lines }
  }

  /// The lease could (nil) or could not be renewed.
  func lease(_ fault: String?) {
    update { $0.leaseFault = fault }
  }

  /// The database file was deleted or replaced; true for the first report (the caller acts on it once).
  func databaseFile(_ change: DatabaseFileChange) -> Bool {
    guard !fileChanged.exchange(true, ordering: .acquiringAndReleasing) else { return false }
    update { $0.databaseChange = change }
    return true
  }

  /// Wakes ``wait(untilMs:)`` (the beacon thread, to see that it should stop).
  func wake() {
    condition.locked {
      changed = true
      condition.broadcast()
    }
  }

  /// Waits until something changed or the monotonic time `deadline` (ms).
  func wait(untilMs deadline: Int64) {
    condition.locked {
      while !changed && monotonicMilliseconds() < deadline { condition.wait(until: deadline) }
      changed = false
    }
  }

  private func update(_ change: (inout State) -> Void) {
    condition.locked {
      let before = state
      change(&state)
      if state != before {
        changed = true
        condition.broadcast()
      }
    }
  }
}
