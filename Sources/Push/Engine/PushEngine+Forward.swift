import Logging
import Store

/// One forward the engine plans: a target and the outbox entry whose message it gets.
struct ForwardPlanItem {
  var target: ForwardTarget
  var entry: OutboxEntry
}

extension PushEngine {
  /// Which messages of `whole` (one station's coalesced batch) go to which of the station's active (or failing)
  /// forward targets, never one this sender disabled: received messages to the station (or another of its SSIDs), never subscription entries or the
  /// notices of its own sends. A target with `always` takes all of them; the others only those the mute and quiet
  /// hours let through (`pushable`, the quiet split's batch). Blocked and banned senders' messages were never
  /// stored, so they are never here. A failed read of the targets forwards nothing this round (logged).
  func forwardPlan(_ whole: PushBatch, pushable: PushBatch?) -> [ForwardPlanItem] {
    guard forwarding != nil else { return [] }
    let targets: [ForwardTarget]
    do throws(StoreError) {
      targets = try database.forwardTargets(of: whole.station).filter {
        $0.status.forwards && !disabledForwards.contains(.of($0))
      }
    } catch {
      logger.error(
        "forward: cannot read the station's targets", ["station": whole.station, "error": error.description])
      return []
    }
    guard !targets.isEmpty else { return [] }
    let forwardable = whole.entries.filter { $0.message.direction == .received && $0.message.entry == nil }
    let passing = Set(pushable?.ids ?? [])
    var plan: [ForwardPlanItem] = []
    for target in targets {
      for entry in forwardable where target.always || passing.contains(entry.id) {
        plan.append(ForwardPlanItem(target: target, entry: entry))
      }
    }
    return plan
  }

  /// Queues the forwards of batch `batchID` that are neither done nor waiting for a retry (a waiting one sets the
  /// batch's retry time, as a waiting device does), counting each in `state.pending`.
  func enqueueForwards(_ plan: [ForwardPlanItem], batchID: Int, state: inout BatchState, now: Int64) {
    for item in plan {
      guard let channel = forwardChannels[item.target.kind] else { continue }
      let key = Recipient.of(item.target)
      if done[item.entry.id]?.contains(key) == true { continue }
      if let time = notBefore[key] {
        if time > now {
          state.retryAt = min(state.retryAt ?? time, time)
          continue
        }
        notBefore[key] = nil
      }
      channel.enqueue(
        DeliveryJob(
          id: newJobID(), purpose: .batch(batchID), recipient: .target(item.target), entry: item.entry,
          attempts: state.attempts, throttles: throttles[key] ?? 0,
          expiresAt: item.entry.createdAt + options.push.maxAgeMs))
      state.pending += 1
    }
  }

  /// Applies one forward's decision: delivered or given up, the entry is done for that target; a retry waits
  /// (`notBefore`) and reschedules the batch, and the target shows `failing` with the reason until a delivery makes
  /// it active again; a dead target is disabled with the reason (shown in settings), its waiting forwards are
  /// dropped and the owner is told once (``disable(_:reason:problem:private:now:)``).
  func applyForward(
    _ outcome: DeliveryOutcome, to target: ForwardTarget, state: inout BatchState, now: Int64
  ) -> AfterOutcome {
    let key = Recipient.of(target)
    guard let entry = outcome.job.entry else { return .nothing }
    let fields: [(String, String)] = [
      ("station", target.station), ("type", target.kind.rawValue), ("target", target.id),
    ]
    var disabled = false
    switch outcome.decision {
    case .delivered:
      counters[forward: target.kind, .delivered] += 1
      markDone([entry.id], key)
      noteHealth(target, failure: nil)
      if logger.isEnabled(.debug) {
        logger.log(.debug, "message forwarded", fields: fields + [("outbox", String(entry.id))])
      }
    case .gone(let reason, _):
      markDone(state.batch.ids, key)
      disabled = true
      disable(
        target, reason: reason, problem: outcome.problem ?? .gone,
        private: outcome.response?.refusedAddress != nil,
        now: now)
    case .retry(let at, let reason):
      counters[forward: target.kind, .retried] += 1
      notBefore[key] = at
      state.retryAt = min(state.retryAt ?? at, at)
      if let problem = outcome.problem { noteHealth(target, failure: (reason, problem)) }
      logger.log(
        .warn, "forward failed; will retry",
        fields: fields + [("reason", reason), ("inMs", String(at - now))])
    case .giveUp(let reason), .reauthenticate(let reason), .stopProvider(let reason):
      counters[forward: target.kind, .failed] += 1
      markDone([entry.id], key)
      logger.log(.warn, "forward refused; not retrying", fields: fields + [("reason", reason)])
    }
    return disabled ? .dropWaiting(target) : .nothing
  }

  /// Records a change of an active target's health (written with the round): failing for `failure`, or healthy
  /// again (nil) when it was failing. The same state again writes nothing.
  private func noteHealth(_ target: ForwardTarget, failure: (reason: String, problem: ForwardProblem)?) {
    let key = Recipient.of(target)
    let now = failure?.reason ?? ""
    var known = forwardHealth[key]
    if known == nil, case .failing(let reason, _) = target.status { known = reason }
    if known == now || (known == nil && failure == nil) {
      forwardHealth[key] = now
      return
    }
    forwardHealth[key] = now
    writes.forwardHealth.append(ForwardHealth(station: target.station, id: target.id, failure: failure))
    if let failure {
      logger.log(
        .info, "forward target failing",
        fields: [
          ("station", target.station), ("type", target.kind.rawValue), ("target", target.id),
          ("reason", failure.reason),
        ])
    } else {
      logger.log(
        .info, "forward target active again",
        fields: [("station", target.station), ("type", target.kind.rawValue), ("target", target.id)])
    }
  }

  /// A dead target: disabled with the round's bookkeeping (once, whatever answers of it are still coming),
  /// counted, logged, and its owner told (``noticeDisabled(_:reason:now:)``).
  private func disable(
    _ target: ForwardTarget, reason: String, problem: ForwardProblem, private isPrivate: Bool, now: Int64
  ) {
    guard disabledForwards.insert(.of(target)).inserted else { return }
    forwardHealth[.of(target)] = nil
    counters[forward: target.kind, isPrivate ? .privateAddress : .disabled] += 1
    writes.disabledTargets.append(
      ForwardDisable(station: target.station, id: target.id, reason: reason, problem: problem))
    logger.log(
      .warn, "forward target disabled",
      fields: [
        ("station", target.station), ("type", target.kind.rawValue), ("target", target.id),
        ("reason", reason),
      ])
    noticeDisabled(target, reason: reason, now: now)
  }

  /// Ends the waiting forwards of a target just disabled without sending them (a refused token is never sent
  /// again): done for that target, as after the answer that disabled it.
  func dropWaiting(_ target: ForwardTarget, now: Int64) {
    guard let channel = forwardChannels[target.kind] else { return }
    for job in channel.drop(.of(target)) {
      guard let batchID = job.purpose.batchID else {
        confirming.remove(.of(target))
        continue
      }
      guard var state = batches[batchID] else { continue }
      markDone(state.batch.ids, .of(target))
      state.pending -= 1
      batches[batchID] = state
      if state.pending == 0 { finish(batchID, now: now) }
    }
  }

  /// How long the notice of a disabled target may wait for a device, ms.
  static let forwardNoticeLifetimeMs: Int64 = 86_400_000

  /// Tells the station's owner once that `target` was disabled: a push notice (``ForwardNotice``) to each of the
  /// station's live devices registered with the station key, through the notice path claim codes take. A station
  /// without such a device is told nothing more than its settings say (`status` disabled with the reason).
  private func noticeDisabled(_ target: ForwardTarget, reason: String, now: Int64) {
    let devices: [DeviceRecord]
    do throws(StoreError) {
      devices = try database.devices(of: target.station, refreshedSince: now - options.stationExpiryMs)
        .filter { $0.keyed && clientReady(for: $0.platform) }
    } catch {
      logger.error(
        "forward: cannot read the station's devices for the notice",
        ["station": target.station, "error": error.description])
      return
    }
    let notice = PushContent(
      station: target.station, fromCall: target.station, seqId: nil, text: "", count: 0,
      kind: .forwardDisabled(ForwardNotice(target, reason: reason)))
    for device in devices {
      enqueueNotice(
        notice, .forwardDisabled, to: device, expiresAt: now + Self.forwardNoticeLifetimeMs, now: now)
    }
  }

  // MARK: Confirmation mails

  /// Sends the confirmation mails that are due (an email target saved or a resend asked for), when email
  /// forwarding is configured: a fresh 6-digit code each, counted against the address
  /// (`Database.beginForwardConfirmation`, at most 3 in 24 hours) before the mail goes out; a mail put off by a
  /// passing failure goes again with the same code after a wait that grows with each failure, not counted again.
  func pollConfirmations(now: Int64) {
    guard forwarding?.email != nil, let channel = forwardChannels[.email] else { return }
    let due: [ForwardTarget]
    do throws(StoreError) {
      due = try database.dueForwardConfirmations()
    } catch {
      logger.error("forward: cannot read the confirmation mails due", ["error": error.description])
      return
    }
    // A target no longer waiting for its mail (confirmed, deleted, its address changed) forgets its failures.
    if !confirmationFailures.isEmpty {
      let dueKeys = Set(due.map { Recipient.of($0) })
      confirmationFailures = confirmationFailures.filter {
        dueKeys.contains($0.key) || confirming.contains($0.key)
      }
    }
    for target in due
    where !confirming.contains(.of(target)) && !disabledForwards.contains(.of(target)) {
      if let time = notBefore[.of(target)], time > now { continue }
      var generator = SystemRandomNumberGenerator()
      let fresh = String(String(UInt32.random(in: 0..<1_000_000, using: &generator) + 1_000_000).dropFirst())
      let code: String
      do throws(StoreError) {
        guard
          let taken = try database.beginForwardConfirmation(
            station: target.station, id: target.id, newCode: fresh, now: now)
        else {
          logger.info(
            "forward: no confirmation mail: the address had its mails of the last 24 hours",
            ["station": target.station, "target": target.id])
          continue
        }
        code = taken
      } catch {
        logger.error("forward: cannot record a confirmation mail", ["error": error.description])
        continue
      }
      confirming.insert(.of(target))
      channel.enqueue(
        DeliveryJob(
          id: newJobID(), purpose: .confirmation(code: code), recipient: .target(target),
          attempts: confirmationFailures[.of(target), default: 0]))
    }
  }

  /// A confirmation mail's outcome: sent (counted); put off (due again with the same code after the wait, which
  /// grows with each failure in a row as a forward's backoff does; not counted again); refused for the address (the
  /// target is disabled); given up (logged).
  func handleConfirmation(_ outcome: DeliveryOutcome, now: Int64) {
    let target = outcome.job.target
    confirming.remove(.of(target))
    let fields: [(String, String)] = [("station", target.station), ("target", target.id)]
    if case .retry = outcome.decision {
      confirmationFailures[.of(target), default: 0] += 1
    } else {
      confirmationFailures[.of(target)] = nil
    }
    switch outcome.decision {
    case .delivered:
      counters[forward: .email, .confirmation] += 1
      logger.log(.info, "forward: confirmation mail sent", fields: fields)
    case .retry(let at, let reason):
      counters[forward: .email, .retried] += 1
      notBefore[.of(target)] = at
      do throws(StoreError) {
        try database.requeueForwardConfirmation(station: target.station, id: target.id)
      } catch {
        logger.error("forward: cannot requeue a confirmation mail", ["error": error.description])
      }
      logger.log(
        .warn, "forward: confirmation mail failed; will retry",
        fields: fields + [("reason", reason), ("inMs", String(at - now))])
    case .gone(let reason, _):
      disable(target, reason: reason, problem: outcome.problem ?? .addressRefused, private: false, now: now)
    case .giveUp(let reason), .reauthenticate(let reason), .stopProvider(let reason):
      counters[forward: .email, .failed] += 1
      logger.log(.warn, "forward: confirmation mail refused", fields: fields + [("reason", reason)])
    }
  }
}
