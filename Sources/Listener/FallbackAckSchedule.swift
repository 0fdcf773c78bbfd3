import APRS

/// The ACKs of stations whose `ackPolicy` is `fallback` (docs/design.md "Hearing the station's own radio"): hold a
/// message's ACK for the station's ``FallbackWait``; if the station's own radio is heard answering it in that time,
/// the server sends none; otherwise exactly one ACK at the end of the wait. Pure: every input carries its `now`
/// (epoch or steady milliseconds, one clock throughout), nothing reads a clock, nothing is sent; the caller acts on
/// the ``FallbackAckDecision``s each input returns and sleeps until ``nextDeadline``.
///
/// Inputs:
/// - ``messageStored(station:sender:msgno:ack:now:wait:)``: a numbered message to the station was committed (a new
///   one or a copy the store found a duplicate), with the ACK it would earn today (``PlannedAck``, the echo of the
///   latest copy: a reply-ack's `}AA` changes between retries).
/// - ``heard(_:now:)``: a line the station itself transmitted answered a message (``StationAnswer``: `ackMM`,
///   `rejMM`, or the reply-ack `}MM` of a message of its own), heard on APRS-IS through an igate. Only lines from
///   APRS-IS: never a line this listener transmitted (its own ACKs have the station's call as their source too).
/// - ``tick(now:)``: time passed.
///
/// Every input first settles the held messages whose wait ended at or before its `now` (so a late tick loses
/// nothing), then applies itself. The rules, for one message (station, sender, number: ``FallbackAckKey``):
/// 1. **First copy**: held until `now + wait`. Copies within the wait join it (the newest copy's ACK is the one
///    sent) and never move its end: a sender's retries cannot postpone the ACK.
/// 2. **The station answers within the wait** (`now` < the end; `ack`, `rej` or reply-ack): ``FallbackAckDecision/answeredByAir(_:rejected:)``
///    once, and no ACK from the server, for this copy or any later one. A station heard ACKing is ACKed for by
///    nobody else: a later copy means the sender missed the radio's ACK, and the radio, which heard the copy as it
///    heard the first, answers it again.
/// 3. **The wait ends** (`now` ≥ stored + wait) without the station's answer: one
///    ``FallbackAckDecision/sendAck(_:ack:)``.
/// 4. **A later copy of a message the server ACKed**: ``FallbackAckDecision/sendAck(_:ack:)`` at once, as every
///    copy is ACKed today (docs/design.md "Invariants", the second: store once, ACK every copy; the caller's 30 s
///    rule, `Database.ackDue`, still applies). An answer heard after the server's ACK changes nothing: it may be the server's own ACK heard
///    back through an igate (same source, addressee and text), and going quiet on it could leave the sender with
///    no ACK at all. So the server never ACKs one copy twice, and never leaves a copy it decided to ACK unACKed.
/// 5. **An answer heard before the message is stored** (the radio answered a copy that reached it by RF only, or
///    the writer's commit came after the answer's line): remembered, and when the message is then stored the first
///    copy gives ``FallbackAckDecision/answeredByAir(_:rejected:)`` at once, with no wait.
///
/// Memory is bounded. At most ``Limits/maximumHeld`` messages are held: holding one more first decides the oldest
/// held one early, as ``FallbackAckDecision/sendAck(_:ack:)`` (the fallback is an ACK, never a missing one).
/// Decisions are remembered for ``Limits/memoryMs`` after the last copy or answer that touched them (default the
/// store's dedup window for numbered messages, ``DedupKey/numberedWindow``: a copy the store calls a duplicate
/// finds its decision) and at most ``Limits/maximumDecided`` of them, the least recently touched dropped first. A
/// message whose decision was dropped is a new message to the schedule: held again (an ACK later than today, never
/// a second one within the wait).
struct FallbackAckSchedule: Sendable {
  /// The bounds of the schedule's memory.
  struct Limits: Sendable, Equatable {
    /// Messages held at once.
    var maximumHeld = 4096
    /// Decisions remembered.
    var maximumDecided = 16_384
    /// How long a decision is remembered after it was last touched (ms).
    var memoryMs = Int64(DedupKey.numberedWindow) * 1000
  }

  /// A message whose ACK is held.
  private struct Held: Sendable {
    let storedAt: Int64
    let deadline: Int64
    /// The order of holding (ties of `storedAt`).
    let serial: UInt64
    var ack: PlannedAck
  }

  /// What was decided.
  private enum Outcome: Sendable, Equatable {
    /// The server ACKed.
    case acked
    /// The station answered (`reported`: ``FallbackAckDecision/answeredByAir(_:rejected:)`` given).
    case air(rejected: Bool, reported: Bool)
  }

  private struct Decided: Sendable {
    var outcome: Outcome
    var touchedAt: Int64
    var serial: UInt64
  }

  /// The bounds in force.
  let limits: Limits
  private var held: [FallbackAckKey: Held] = [:]
  private var decided: [FallbackAckKey: Decided] = [:]
  /// Decisions in the order they were last touched (`serial`), with stale entries skipped: the eviction order.
  private var order: [(serial: UInt64, key: FallbackAckKey)] = []
  private var orderHead = 0
  private var serial: UInt64 = 0

  /// Held messages decided early because ``Limits/maximumHeld`` was reached.
  private(set) var evictedHeld = 0
  /// Decisions dropped because ``Limits/maximumDecided`` was reached (not counting those that aged out).
  private(set) var forgottenDecisions = 0
  /// Held messages decided as ACKed by the server (their wait ended, or ``Limits/maximumHeld`` decided them early):
  /// the fallback ACKs, as opposed to the ACKs of later copies (rule 4).
  private(set) var waitsEnded = 0

  /// An empty schedule.
  init(limits: Limits = Limits()) {
    precondition(limits.maximumHeld > 0 && limits.maximumDecided > 0 && limits.memoryMs > 0)
    self.limits = limits
  }

  /// Messages whose ACK is held now.
  var heldCount: Int { held.count }
  /// Decisions remembered now.
  var decidedCount: Int { decided.count }
  /// Places in the eviction order, stale ones included (at most about twice ``Limits/maximumDecided`` + 1024).
  var orderLength: Int { order.count - orderHead }

  /// When the next held message's wait ends (the caller calls ``tick(now:)`` then), nil when none is held. A scan
  /// of the held messages (at most ``Limits/maximumHeld``; in practice the few of the last minute).
  var nextDeadline: Int64? { held.values.lazy.map(\.deadline).min() }

  /// Whether the message's ACK is held now.
  func isHeld(_ key: FallbackAckKey) -> Bool { held[key] != nil }

  /// Whether the schedule knows the message at all (held, or decided and still remembered).
  func knows(_ key: FallbackAckKey) -> Bool { held[key] != nil || decided[key] != nil }

  /// Remembers a decision made before this schedule existed (a restart: what the store says of a message the
  /// schedule does not know), without a decision of its own: `answeredByAir` (the stored entry says so) as rule 2
  /// (later copies earn nothing), otherwise as ACKed by the server (rule 4: every later copy is ACKed at once).
  mutating func remember(_ key: FallbackAckKey, answeredByAir: Bool, now: Int64) {
    guard !knows(key) else { return }
    let outcome: Outcome = answeredByAir ? .air(rejected: false, reported: true) : .acked
    touch(key, Decided(outcome: outcome, touchedAt: now, serial: 0), now: now)
  }

  /// A numbered message to `station` from `sender` was stored (or found a duplicate of one stored), earning `ack`
  /// today; `wait` is the station's ``FallbackWait``. `msgno` is the number alone (`MM` of `{MM}AA`).
  mutating func messageStored(
    station: some StringProtocol, sender: some StringProtocol, msgno: some StringProtocol, ack: PlannedAck,
    now: Int64, wait: FallbackWait = .default
  ) -> [FallbackAckDecision] {
    let key = FallbackAckKey(station: station, sender: sender, msgno: msgno)
    held[key]?.ack = ack  // the newest copy's echo, also when its wait ends just now
    var decisions = settle(now: now)
    if decisions.contains(where: { $0.key == key }) { return decisions }  // its one ACK covers this copy
    if held[key] != nil { return decisions }  // rule 1: joins the held copy
    if var known = decided[key] {
      switch known.outcome {
      case .acked:
        decisions.append(.sendAck(key, ack: ack))  // rule 4
      case .air(let rejected, let reported):
        if !reported {  // rule 5
          decisions.append(.answeredByAir(key, rejected: rejected))
          known.outcome = .air(rejected: rejected, reported: true)
        }  // rule 2: later copies earn nothing
      }
      touch(key, known, now: now)
      return decisions
    }
    if held.count >= limits.maximumHeld, let oldest = oldestHeld() {
      decisions.append(decide(oldest, now: now))
      evictedHeld += 1
    }
    serial &+= 1
    held[key] = Held(storedAt: now, deadline: now + wait.milliseconds, serial: serial, ack: ack)
    return decisions
  }

  /// The station's own answer was heard (``StationAnswer``: its `station` is the `fallback` station, its `peer` the
  /// message's sender).
  mutating func heard(_ answer: StationAnswer, now: Int64) -> [FallbackAckDecision] {
    heard(from: answer.station, to: answer.peer, msgno: answer.msgno, rejected: answer.rejected, now: now)
  }

  /// The station `station` was heard answering message `msgno` of `sender` (`rejected`: with `rej`).
  mutating func heard(
    from station: some StringProtocol, to sender: some StringProtocol, msgno: some StringProtocol,
    rejected: Bool, now: Int64
  ) -> [FallbackAckDecision] {
    let key = FallbackAckKey(station: station, sender: sender, msgno: msgno)
    var decisions = settle(now: now)
    if held.removeValue(forKey: key) != nil {  // rule 2
      decisions.append(.answeredByAir(key, rejected: rejected))
      touch(
        key, Decided(outcome: .air(rejected: rejected, reported: true), touchedAt: now, serial: 0), now: now)
    } else if var known = decided[key] {
      // Rule 4 (after the server's ACK nothing changes) and rule 2 (already answered): only remembered longer.
      known.touchedAt = now
      touch(key, known, now: now)
    } else {  // rule 5
      touch(
        key, Decided(outcome: .air(rejected: rejected, reported: false), touchedAt: now, serial: 0), now: now)
    }
    return decisions
  }

  /// Time passed: the held messages whose wait ended at or before `now`, ACKed (rule 3).
  mutating func tick(now: Int64) -> [FallbackAckDecision] { settle(now: now) }

  // MARK: - Internals

  /// Rule 3 for every held message due at `now`, earliest end first (ties in the order they were held); then the
  /// decisions that aged out are dropped.
  private mutating func settle(now: Int64) -> [FallbackAckDecision] {
    var due = held.filter { $0.value.deadline <= now }.map { (key: $0.key, held: $0.value) }
    due.sort { ($0.held.deadline, $0.held.serial) < ($1.held.deadline, $1.held.serial) }
    let decisions = due.map { decide($0.key, now: now) }
    forget(now: now)
    return decisions
  }

  /// The held message `key` decided as ACKed by the server, now.
  private mutating func decide(_ key: FallbackAckKey, now: Int64) -> FallbackAckDecision {
    let entry = held.removeValue(forKey: key)!
    waitsEnded += 1
    touch(key, Decided(outcome: .acked, touchedAt: now, serial: 0), now: now)
    return .sendAck(key, ack: entry.ack)
  }

  /// The held message held longest.
  private func oldestHeld() -> FallbackAckKey? {
    held.min { ($0.value.storedAt, $0.value.serial) < ($1.value.storedAt, $1.value.serial) }?.key
  }

  /// Remembers `entry` for `key` as touched at `now` (moved to the end of the eviction order), dropping the least
  /// recently touched decision when that makes too many.
  private mutating func touch(_ key: FallbackAckKey, _ entry: Decided, now: Int64) {
    serial &+= 1
    var entry = entry
    entry.touchedAt = now
    entry.serial = serial
    decided[key] = entry
    order.append((serial, key))
    forget(now: now)
  }

  /// Drops decisions past their memory and, beyond ``Limits/maximumDecided``, the least recently touched.
  private mutating func forget(now: Int64) {
    while orderHead < order.count {
      let (entrySerial, key) = order[orderHead]
      guard let entry = decided[key], entry.serial == entrySerial else {
        orderHead += 1  // touched again later: a stale place in the order
        continue
      }
      if decided.count > limits.maximumDecided {
        forgottenDecisions += 1
      } else if entry.touchedAt + limits.memoryMs > now {
        break
      }
      decided.removeValue(forKey: key)
      orderHead += 1
    }
    // Stale places (decisions touched again) come off once they outnumber the decisions: the order stays within
    // about twice ``Limits/maximumDecided``.
    if order.count - orderHead > 2 * decided.count + 1024 {
      order = order[orderHead...].filter { decided[$0.key]?.serial == $0.serial }
      orderHead = 0
    } else if orderHead > 1024 && orderHead * 2 > order.count {
      order.removeFirst(orderHead)
      orderHead = 0
    }
  }
}
