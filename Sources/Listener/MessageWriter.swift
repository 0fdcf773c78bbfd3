import APRS
import Store

/// What one batch of lines came to.
struct BatchResult: Sendable, Equatable {
  /// ACK lines to send now: their messages are committed and the 30 s rule let them through.
  var acks: [[UInt8]] = []
  /// Messages stored (new); subscription entries are counted apart, in ``storedEntries``.
  var stored = 0
  /// Subscription entries stored (new), by kind.
  var storedEntries: [SubscriptionKind: Int] = [:]
  /// Copies of messages already stored (not stored again).
  var duplicates = 0
  /// Messages for stations that vanished between the snapshot and the commit.
  var unknownStation = 0
  /// Messages dropped because their addressee blocks the sender (not stored, ACKed or pushed).
  var blocked = 0
  /// Messages dropped because the operator banned their sender (`bans`; not stored, ACKed or pushed).
  var banned = 0
  /// Receipts recorded.
  var receipts = 0
  /// ACKs the 30 s rule held back.
  var acksSuppressed = 0
  /// Lines that led to nothing, by reason.
  var skipped: [SkipReason: Int] = [:]
  /// The stations that got new pushes queued (for the push sender), upper case, without repeats: new messages,
  /// and sends of theirs an addressee rejected.
  var storedStations: [String] = []
  /// Sends of served stations that an ack, rej or reply-ack in this batch ended.
  var sendsAnswered: [FinishedSend] = []
  /// Messages to `fallback` stations their own radio answered (no ACK from the server).
  var airAnswered = 0
  /// Held messages to `fallback` stations whose wait ended unanswered (the server ACKed them).
  var fallbackAcks = 0
  /// `sent` entries of the stations' own radios (`trackSent`) their peers' acks or rejs answered.
  var heardSendsAnswered = 0

  init() {}
}

/// The writer's work on one batch: route every line, then in ONE write transaction (`writeBatch`) read the
/// addressees' settings (`stationSettings(of:)`: the stations are few, and the answer holds at the commit) and
/// apply them (``LineRouter/settle(_:settings:canTransmit:)``: blocked senders dropped, the ACK policy), store the
/// messages (dedup, message, outbox row, ring trim: `storeMessages`), keep the ACKs of `device` stations for the
/// pull (`recordDeviceAcks`), record the receipts, and decide the ACKs (`ackDue`). The ACK lines are returned only once that transaction committed, and a failure
/// returns none at all (nothing of the batch is kept, not even the ACK send times): ACK only after commit.
///
/// Owns nothing but the `Database` it is given (one per thread); the time is passed in.
struct MessageWriter {
  let database: Database
  var router: LineRouter
  /// The least time between two ACKs of one message (ms).
  var ackIntervalMs: Int64
  /// The ACKs held for `fallback` stations' radios (nil: every such station is ACKed as under `server`).
  var fallback: FallbackAcks?

  init(
    database: Database, router: LineRouter, ackIntervalMs: Int64 = 30_000,
    fallback: FallbackAcks? = FallbackAcks()
  ) {
    self.database = database
    self.router = router
    self.ackIntervalMs = ackIntervalMs
    self.fallback = fallback
  }

  /// Processes `lines` read from APRS-IS (without line endings). `now`: the durations' clock, epoch-like ms (the
  /// dedup windows and the 30 s ACK rule; the listener passes `steadyEpochMilliseconds()`); `stampedAt`: the
  /// wall clock (the stored timestamp's floor, receipts, answers, the outbox; default `now`). See
  /// `Database.storeMessages`.
  func process(
    _ lines: [[UInt8]], stations: some ServedStations, canTransmit: Bool, now: Int64, stampedAt: Int64? = nil
  ) throws(StoreError) -> BatchResult {
    try process(
      lines.map { QueuedLine($0) }, stations: stations, canTransmit: canTransmit, now: now,
      stampedAt: stampedAt)
  }

  /// Processes queued lines, each routed by its origin. Lines this listener transmitted that lead to nothing are
  /// not counted as skipped (they were never APRS-IS traffic). The clocks as for the lines of APRS-IS.
  func process(
    _ lines: [QueuedLine], stations: some ServedStations, canTransmit: Bool, now: Int64,
    stampedAt: Int64? = nil
  ) throws(StoreError) -> BatchResult {
    var result = BatchResult()
    var planned: [PlannedMessage] = []
    var receipts: [DeliveryReceipt] = []
    var sightings: [WatchSighting] = []
    var continuations: [WeatherContinuation] = []
    var answers: [StationAnswer] = []
    let subscriptions = stations.subscriptionIndex
    let own = stations.ownTransmissions
    for line in lines {
      let routed = router.route(
        line.bytes, stations: stations, canTransmit: canTransmit, origin: line.origin,
        subscriptions: subscriptions, own: own)
      if let reason = routed.skip, line.origin == .aprsis { result.skipped[reason, default: 0] += 1 }
      planned.append(contentsOf: routed.messages)
      if let receipt = routed.receipt { receipts.append(receipt) }
      if let answer = routed.answer { answers.append(answer) }
      if let sighting = routed.sighting { sightings.append(sighting) }
      if let continuation = routed.continuation { continuations.append(continuation) }
    }
    return try commit(
      planned, receipts: receipts, sightings: sightings, continuations: continuations, answers: answers,
      own: own, now: now, stampedAt: stampedAt, into: result, canTransmit: canTransmit)
  }

  /// Reports the watches whose silence is due at `stampedAt` (the wall clock: silences span restarts), storing
  /// their entries as a batch would (``commit(_:receipts:sightings:watchesDue:now:stampedAt:into:canTransmit:)``).
  /// Nothing is locked or written when none is due.
  func reportSilences(now: Int64, stampedAt: Int64) throws(StoreError) -> BatchResult {
    guard let due = try database.nextWatchDeadline(), due <= stampedAt else { return BatchResult() }
    return try commit([], receipts: [], watchesDue: true, now: now, stampedAt: stampedAt)
  }

  /// Stores already routed messages and receipts and decides their ACKs, in one transaction (none when there is
  /// nothing to store). `canTransmit`: ACKs may be sent now. `sightings`: packets of watched calls, whose watches
  /// are run (``WatchTracker``) in the same transaction, their events stored as entries; `continuations`: weather
  /// lines stored with the alerts they continue (one that continues none is counted as skipped weather);
  /// `watchesDue`: also report the silences due at `stampedAt`. `answers`: followed stations' own answers heard
  /// (``FallbackAckSchedule/heard(_:now:)``); `own`: the stations followed, whose `fallback` ACKs are held
  /// (``LineRouter/settle(_:settings:reaches:own:canTransmit:)``, ``runFallback(stored:heard:now:stampedAt:canTransmit:)``).
  func commit(
    _ planned: [PlannedMessage], receipts: [DeliveryReceipt], sightings: [WatchSighting] = [],
    continuations: [WeatherContinuation] = [], answers: [StationAnswer] = [], own: OwnTransmissions = .empty,
    watchesDue: Bool = false, now: Int64, stampedAt: Int64? = nil, into partial: BatchResult = BatchResult(),
    canTransmit: Bool = true
  ) throws(StoreError) -> BatchResult {
    var result = partial
    let stamp = stampedAt ?? now
    // Nothing to store (most batches of a full feed): no transaction, no write lock.
    guard
      !planned.isEmpty || !receipts.isEmpty || !sightings.isEmpty || !continuations.isEmpty
        || !answers.isEmpty
        || watchesDue
    else { return result }
    let (candidates, due) = try database.writeBatch { () throws(StoreError) in
      var planned = planned
      planned += try watchEntries(for: sightings, now: stamp)
      let continued = try continuationEntries(for: continuations, planned: planned, stampedAt: stamp)
      if continued.unmatched > 0 { result.skipped[.weather, default: 0] += continued.unmatched }
      planned += continued.entries
      if watchesDue { planned += try silenceEntries(now: stamp) }
      // The operator's bans first (their ends are wall-clock times): a banned sender's messages are dropped before
      // anything else sees them.
      let bans = try database.activeBans(now: stamp)
      if !bans.isEmpty {
        let before = planned.count
        planned.removeAll { $0.incoming.direction == .received && bans.bans(sender: $0.incoming.peer) }
        result.banned += before - planned.count
      }
      // The addressees' settings and whom their claims govern, read in this transaction (they hold at its commit),
      // applied before anything is written: blocked senders dropped, each station's ACK policy deciding its ACKs.
      let addressees = planned.lazy.filter { $0.incoming.direction == .received }.map(\.incoming.station)
      let settings = try database.stationSettings(of: addressees)
      let settled = LineRouter.settle(
        planned, settings: settings, reaches: try database.claimReaches(of: addressees), own: own,
        canTransmit: canTransmit)
      result.blocked += settled.blocked
      let outcomes = try database.storeMessages(
        settled.messages.map { Self.holdingPush($0, settings: settings[$0.incoming.station]) }, now: now,
        stampedAt: stamp)
      var stations = Set<String>()
      var candidates: [PlannedAck] = []
      var kept: [PendingDeviceAck] = []
      var copies: [String: [PlannedAck]] = [:]
      var held: [HeldAckInput] = []
      for (message, outcome) in zip(settled.messages, outcomes) {
        if let ack = message.fallbackAck, outcome != .unknownStation, let msgno = message.incoming.msgno {
          held.append(
            HeldAckInput(
              station: message.incoming.station, sender: message.incoming.peer, msgno: Self.number(of: msgno),
              ack: ack, wait: settings[message.incoming.station]?.fallbackWait ?? .default,
              duplicate: outcome == .duplicate))
        }
        switch outcome {
        case .stored(let messageID, _):
          if let entry = message.incoming.entry {
            result.storedEntries[entry.kind, default: 0] += 1
          } else {
            result.stored += 1
          }
          if message.incoming.direction == .received, stations.insert(message.incoming.station).inserted {
            result.storedStations.append(message.incoming.station)
          }
          if let deviceAck = message.deviceAck, let line = String(validating: deviceAck.line, as: UTF8.self) {
            kept.append(
              PendingDeviceAck(
                messageID: messageID, station: message.incoming.station, key: deviceAck.key, line: line))
          }
        case .duplicate:
          result.duplicates += 1
          if canTransmit, let deviceAck = message.deviceAck {
            copies[message.incoming.station, default: []].append(deviceAck)
          }
        case .unknownStation:
          result.unknownStation += 1
          continue
        }
        if let ack = message.ack { candidates.append(ack) }
      }
      if !receipts.isEmpty {
        result.receipts = try database.recordReceipts(receipts, now: stamp)
        // The peers' answers to what the stations' radios sent (`trackSent`).
        result.heardSendsAnswered = try database.answerHeardSends(receipts, now: stamp)
      }
      // Acks, rejs and reply-acks stop the stations' sends in flight (`/v1/send`), in this same transaction.
      let sendAnswers =
        receipts.map(SendAnswer.init) + planned.compactMap { SendAnswer(replyAckIn: $0.incoming) }
      result.sendsAnswered = try database.answerSends(sendAnswers, now: stamp)
      for send in result.sendsAnswered where send.state == .rejected && !stations.contains(send.station) {
        stations.insert(send.station)
        result.storedStations.append(send.station)
      }
      try database.recordDeviceAcks(kept)
      // A copy of a message a device already pulled earns its ACK again (ackPolicy device).
      for (station, acks) in copies {
        let pulled = try database.pulledDeviceAckKeys(station: station, keys: acks.map(\.key))
        candidates.append(contentsOf: acks.filter { pulled.contains($0.key) })
      }
      // The ACKs held for the stations' radios: what this batch stored and heard, and the waits that ended.
      let fallback = try runFallback(
        stored: held, heard: answers, now: now, stampedAt: stamp, canTransmit: canTransmit)
      candidates += fallback.acks
      result.airAnswered += fallback.airAnswered
      result.fallbackAcks += fallback.fallbackAcks
      for station in fallback.released where stations.insert(station).inserted {
        result.storedStations.append(station)
      }
      let due = try database.ackDue(keys: candidates.map(\.key), now: now, minIntervalMs: ackIntervalMs)
      return (candidates, due)
    }
    // After the commit above: every ACK below is for a message that is durably stored.
    for (ack, isDue) in zip(candidates, due) {
      if isDue { result.acks.append(ack.line) } else { result.acksSuppressed += 1 }
    }
    return result
  }

  /// `message` with its push held for the station's radio: a `fallback` ACK is held and the station wants its
  /// radio's answers pushed other than as any push (`airAnswered` not `push`): the push waits for the decision,
  /// at most the wait.
  static func holdingPush(_ message: SettledMessage, settings: StationSettings?) -> IncomingMessage {
    var incoming = message.incoming
    if message.fallbackAck != nil, let settings, settings.airAnswered != .push {
      incoming.pushHoldMs = settings.fallbackWait.milliseconds
    }
    return incoming
  }
}
