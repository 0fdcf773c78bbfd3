import APRS
import Store

/// When the copies of a sent message (`/v1/send`) go out, and when it expires: pure decisions over the sends in
/// flight and a clock the caller passes in (epoch ms).
///
/// The schedule is a list of offsets from the send (default 0, 31, 62, 124, 248, 496, 992 and 1984 s). A copy is
/// due at the first offset after the previous copy, and never less than ``minimumSpacingMs`` after it: APRS-IS
/// drops a line identical to one it passed within 30 s, counted in whole seconds (docs/aprs-is.md "Sending ACKs"). Offsets missed
/// while the link was down or the listener was not running collapse into one copy (no burst after a restart).
/// With no offset left, the message waits ``ackWaitMs`` after the later of the last copy and the last offset,
/// then expires; a message past that time expires without another copy, even one never sent. Copies held back by
/// the transmit budget (``TransmitBudget``) move the rest of their schedule instead: none is lost.
struct SendScheduler: Sendable, Equatable {
  /// The least time between two copies of one message (ms).
  static let minimumSpacingMs: Int64 = 31_000

  /// Offsets of the copies from the send, ms, increasing (`[send] schedule`).
  var offsetsMs: [Int64]
  /// How long an answer may take after the last copy (ms, `[send] ackWait`).
  var ackWaitMs: Int64
  /// The least time between two copies (ms).
  var minimumSpacingMs: Int64

  init(offsetsMs: [Int64], ackWaitMs: Int64, minimumSpacingMs: Int64 = SendScheduler.minimumSpacingMs) {
    self.offsetsMs = offsetsMs.isEmpty ? [0] : offsetsMs
    self.ackWaitMs = ackWaitMs
    self.minimumSpacingMs = minimumSpacingMs
  }

  /// When the next copy of a message sent at `createdAt` is due, given its last copy (nil before the first) and
  /// how long the transmit budget held its copies back (`budgetDelayMs`: the offsets after the first move by
  /// it); nil when the schedule has no copy left.
  func nextCopy(createdAt: Int64, lastSentAt: Int64?, budgetDelayMs: Int64 = 0) -> Int64? {
    // A send accepted past everyone's budget waits for it from the start (its budget delay).
    guard let last = lastSentAt else { return createdAt + budgetDelayMs + offsetsMs[0] }
    let start = createdAt + budgetDelayMs
    guard let slot = offsetsMs.lazy.map({ start + $0 }).first(where: { $0 > last }) else { return nil }
    return max(slot, last + minimumSpacingMs)
  }

  /// When a message sent at `createdAt` whose last copy went out at `lastSentAt` expires without an answer (the
  /// last offset moved by `budgetDelayMs`, as its copies were).
  func expiry(createdAt: Int64, lastSentAt: Int64?, budgetDelayMs: Int64 = 0) -> Int64 {
    max(createdAt + budgetDelayMs + offsetsMs[offsetsMs.count - 1], lastSentAt ?? createdAt) + ackWaitMs
  }

  /// What to do now.
  struct Plan: Sendable, Equatable {
    /// The changes to record, in one transaction, before any line is written.
    var changes: [SendScheduleChange] = []
    /// The line of each copy to write, by message id, once its change is recorded.
    var lines: [Int64: [UInt8]] = [:]
    /// Sends whose copy is due but waits for the transmit budget, in the order they were given (nothing of them
    /// is recorded: they stay due).
    var waiting: [Int64] = []

    init() {}
  }

  /// The decisions for `sends` (the rows `Database.dueSends` returned, the copy due first first) at `now`.
  ///
  /// A copy is due when `canTransmit` (a verified login is up) and its next copy's time (as stored; computed for a
  /// row never scheduled) has come. At most `allowance` copies go out (the transmit budget's room, in the order
  /// given); the other due ones wait, unchanged, in ``Plan/waiting``. A send in `waiting` (the ones the budget
  /// held back before) keeps its place: it does not expire while its copy waits, and when the copy goes out the
  /// time it waited is added to the send's budget delay, so its later copies and its expiry move by as much and
  /// no copy of the schedule is lost. Otherwise a send past its expiry expires, and so does one due whose
  /// addressee `OutgoingMessage.addresseeProblem` refuses (stored before it was refused); a bulletin
  /// (``Store/SendKind/bulletin``, `SendScheduler+Bulletins.swift`) follows its grid instead, goes out
  /// unnumbered and ends `completed` with its last copy or when its grid is over; a due copy goes out
  /// with its next copy and expiry (offsets missed while the link was down collapse into this one copy, no
  /// burst); else its schedule is (re)written if it differs from the stored one (a new row, or a changed ack
  /// wait), so it is due again only when there is something to do.
  ///
  /// When the budget cannot take every due copy, the stations take turns (``fairOrder(_:)``): each station's
  /// first send before any station's second, so one station's burst never holds back everyone else's copies.
  func plan(
    _ sends: [InFlightSend], now: Int64, canTransmit: Bool, allowance: Int = .max, waiting: Set<Int64> = []
  ) -> Plan {
    var plan = Plan()
    var room = allowance
    for send in Self.fairOrder(sends) {
      let expiresAt = expiry(of: send, lastSentAt: send.lastSentAt, budgetDelayMs: send.budgetDelayMs)
      let computed = nextCopy(of: send, lastSentAt: send.lastSentAt, budgetDelayMs: send.budgetDelayMs)
      let next = send.expiresAt == nil ? computed : send.nextAt
      let due = canTransmit && next.map { now >= $0 } == true
      let held = due && waiting.contains(send.id)
      // A send stored before its addressee was refused (an older server took `EMAIL-2`) never goes out.
      let refused = due && Self.refusal(of: send) != nil
      if (now >= expiresAt && !held) || refused {
        plan.changes.append(send.kind == .bulletin ? .completed(id: send.id) : .expired(id: send.id))
        continue
      }
      if due, let next {
        guard room > 0 else {
          plan.waiting.append(send.id)
          continue
        }
        room -= 1
        let delay = held ? max(1, now - next) : 0
        let budgetDelayMs = send.budgetDelayMs + delay
        let nextAt = nextCopy(of: send, lastSentAt: now, budgetDelayMs: budgetDelayMs)
        plan.changes.append(
          .transmitted(
            id: send.id, at: now, nextAt: nextAt,
            expiresAt: expiry(of: send, lastSentAt: now, budgetDelayMs: budgetDelayMs),
            budgetDelayMs: delay))
        // A bulletin's last copy ends it at once (no answer to wait for).
        if send.kind == .bulletin && nextAt == nil { plan.changes.append(.completed(id: send.id)) }
        plan.lines[send.id] = Self.line(of: send)
      } else if next != send.nextAt || expiresAt != send.expiresAt {
        plan.changes.append(.scheduled(id: send.id, nextAt: next, expiresAt: expiresAt))
      }
    }
    return plan
  }
}

extension SendScheduler {
  /// `sends` in turns by station: every station's first (in the order given), then every station's second, and so
  /// on; stable within a station. Pure.
  static func fairOrder(_ sends: [InFlightSend]) -> [InFlightSend] {
    var turn: [String: Int] = [:]
    let ranked = sends.enumerated().map { index, send -> (round: Int, index: Int, send: InFlightSend) in
      let round = turn[send.station, default: 0]
      turn[send.station] = round + 1
      return (round, index, send)
    }
    return ranked.sorted { ($0.round, $0.index) < ($1.round, $1.index) }.map(\.send)
  }
}
