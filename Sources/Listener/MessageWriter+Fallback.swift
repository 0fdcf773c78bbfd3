import APRS
import Store

/// The writer's ``FallbackAckSchedule`` (docs/design.md "Hearing the station's own radio"): one per writer, used by
/// its thread alone. A batch's transaction works on it and puts back what it was when the transaction fails
/// (``transact(_:)``), so a batch tried again decides the same.
final class FallbackAcks: @unchecked Sendable {
  private(set) var schedule: FallbackAckSchedule

  init(limits: FallbackAckSchedule.Limits = FallbackAckSchedule.Limits()) {
    schedule = FallbackAckSchedule(limits: limits)
  }

  /// When the next held message's wait ends (the writer's `now` clock), nil when none is held.
  var nextDeadline: Int64? { schedule.nextDeadline }

  /// Runs `body` on the schedule; a throw puts the schedule back as it was.
  func transact<T>(_ body: (inout FallbackAckSchedule) throws(StoreError) -> T) throws(StoreError) -> T {
    let saved = schedule
    do {
      return try body(&schedule)
    } catch {
      schedule = saved
      throw error
    }
  }
}

/// A numbered message to a `fallback` station the batch stored (or found a copy of), for the schedule.
struct HeldAckInput: Sendable, Equatable {
  var station: String
  var sender: String
  /// The number alone (`MM` of a stored `MM}AA`).
  var msgno: String
  var ack: PlannedAck
  var wait: FallbackWait
  /// A copy of a message stored before (the store found its dedup key).
  var duplicate = false
}

/// What the schedule's decisions came to, inside the writer's transaction.
struct FallbackOutcome: Sendable, Equatable {
  /// ACKs to put through the 30 s rule (the wait ended, or a later copy of a message the server ACKed).
  var acks: [PlannedAck] = []
  /// Messages the station's radio answered.
  var airAnswered = 0
  /// Held messages whose wait ended unanswered (``FallbackAckSchedule/waitsEnded``; their ACK is among ``acks``
  /// when the connection may transmit).
  var fallbackAcks = 0
  /// Stations whose held pushes were made due.
  var released: [String] = []
}

extension MessageWriter {
  /// The number alone of a stored `seqId` (`MM` of `MM}AA`).
  static func number(of seqId: String) -> String {
    String(seqId.prefix { $0 != "}" })
  }

  /// Feeds the schedule what this transaction stored and heard, and applies its decisions
  /// (``applyFallback(_:stampedAt:canTransmit:)``). Inside the caller's write transaction.
  func runFallback(
    stored: [HeldAckInput], heard: [StationAnswer], now: Int64, stampedAt: Int64, canTransmit: Bool
  ) throws(StoreError) -> FallbackOutcome {
    guard let fallback,
      !stored.isEmpty || !heard.isEmpty || (fallback.nextDeadline.map { $0 <= now } ?? false)
    else { return FallbackOutcome() }
    return try fallback.transact { (schedule) throws(StoreError) -> FallbackOutcome in
      let waitsEnded = schedule.waitsEnded
      var decisions: [FallbackAckDecision] = []
      for input in stored {
        let key = FallbackAckKey(station: input.station, sender: input.sender, msgno: input.msgno)
        if input.duplicate, !schedule.knows(key) {
          // A copy of a message stored before this writer knew it (a restart): its wait is over or lost. What
          // the store says decides: answered by the air, nothing; otherwise ACKed at once, never held again.
          let air =
            try database.answeredBy(station: key.station, sender: key.sender, msgno: key.msgno) == .air
          schedule.remember(key, answeredByAir: air, now: now)
        }
        decisions += schedule.messageStored(
          station: input.station, sender: input.sender, msgno: input.msgno, ack: input.ack, now: now,
          wait: input.wait)
      }
      for answer in heard { decisions += schedule.heard(answer, now: now) }
      decisions += schedule.tick(now: now)
      var outcome = try applyFallback(decisions, stampedAt: stampedAt, canTransmit: canTransmit)
      outcome.fallbackAcks = schedule.waitsEnded - waitsEnded
      return outcome
    }
  }

  /// Applies decisions in the caller's write transaction: an air answer marks its message and lets its push go
  /// as the station's `airAnswered` says; a wait's end lets its push go and its ACK is returned.
  func applyFallback(_ decisions: [FallbackAckDecision], stampedAt: Int64, canTransmit: Bool)
    throws(StoreError) -> FallbackOutcome
  {
    var outcome = FallbackOutcome()
    var released = Set<String>()
    for decision in decisions {
      let key = decision.key
      let decided: Database.FallbackDecision
      switch decision {
      case .sendAck(_, let ack):
        if canTransmit { outcome.acks.append(ack) }
        decided = .serverAcked
      case .answeredByAir:
        outcome.airAnswered += 1
        decided = .answeredByAir(try database.stationSettings(key.station)?.airAnswered ?? .quiet)
      }
      let wasHeld = try database.decideHeldMessage(
        station: key.station, sender: key.sender, msgno: key.msgno, decided, now: stampedAt)
      if wasHeld, released.insert(key.station).inserted { outcome.released.append(key.station) }
    }
    return outcome
  }

  /// Decides the held messages whose wait ended by `now` (the writer's clock; `stampedAt` the wall clock), in
  /// one write transaction when any is due: their ACK lines (through the 30 s rule) and their pushes. Nothing is
  /// locked or written when none is due.
  func settleFallbackAcks(now: Int64, stampedAt: Int64, canTransmit: Bool) throws(StoreError) -> BatchResult {
    var result = BatchResult()
    guard let fallback, let due = fallback.nextDeadline, due <= now else { return result }
    let (acks, isDue, outcome) = try database.writeBatch { () throws(StoreError) in
      let outcome = try runFallback(
        stored: [], heard: [], now: now, stampedAt: stampedAt, canTransmit: canTransmit)
      let isDue = try database.ackDue(keys: outcome.acks.map(\.key), now: now, minIntervalMs: ackIntervalMs)
      return (outcome.acks, isDue, outcome)
    }
    for (ack, due) in zip(acks, isDue) {
      if due { result.acks.append(ack.line) } else { result.acksSuppressed += 1 }
    }
    result.airAnswered = outcome.airAnswered
    result.fallbackAcks = outcome.fallbackAcks
    result.storedStations = outcome.released
    return result
  }
}
