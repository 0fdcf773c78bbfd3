import Store

extension PushEngine {
  /// Applies one delivery's outcome, whatever its channel: a notice's is counted and logged, a confirmation
  /// mail's is its target's; a batch's moves the batch toward done (``applyPush(_:to:state:now:)`` for a device,
  /// ``applyForward(_:to:state:now:)`` for a target), and the batch finishes when its last job answered.
  func handle(_ outcome: DeliveryOutcome, now: Int64) {
    let key = outcome.job.recipient.key
    switch outcome.job.purpose {
    case .notice(let notice):
      handleNotice(outcome, notice)
    case .confirmation:
      noteThrottle(outcome, key)
      handleConfirmation(outcome, now: now)
    case .batch(let batchID):
      noteThrottle(outcome, key)
      guard var state = batches[batchID] else { return }
      var after: AfterOutcome = .nothing
      switch outcome.job.recipient {
      case .device(let device): after = applyPush(outcome, to: device, state: &state, now: now)
      case .target(let target): after = applyForward(outcome, to: target, state: &state, now: now)
      }
      state.pending -= 1
      batches[batchID] = state
      if state.pending == 0 { finish(batchID, now: now) }
      switch after {
      case .nothing: break
      case .stopChannel(let platform, let reason): stop(platform, reason, now: now)
      case .dropWaiting(let target): dropWaiting(target, now: now)
      }
    }
  }

  /// What an outcome asks of the engine once its batch is brought up to date.
  enum AfterOutcome {
    case nothing
    /// Stop a push channel found misconfigured.
    case stopChannel(DevicePlatform, reason: String)
    /// End the waiting jobs of a target just disabled.
    case dropWaiting(ForwardTarget)
  }

  /// Counts 429s in a row per recipient (a 429 without `Retry-After` waits 60 s, doubling with each further one);
  /// any other answer clears it.
  private func noteThrottle(_ outcome: DeliveryOutcome, _ key: Recipient) {
    guard let response = outcome.response, response.transportError == nil else { return }
    throttles[key] = response.status == 429 ? (throttles[key] ?? 0) + 1 : nil
  }

  /// A notice's outcome: counted and logged; a dead token is deleted as after any push.
  private func handleNotice(_ outcome: DeliveryOutcome, _ notice: DeliveryPurpose.Notice) {
    let device = outcome.job.device
    let claim = notice == .claimCode
    let fields: [(String, String)] = [
      ("station", device.station), ("platform", device.platform.rawValue),
      ("token", redactedToken(device.token)),
    ]
    switch outcome.decision {
    case .delivered:
      counters[device.platform][.accepted] += 1
      logger.log(.info, claim ? "claim code pushed" : "forward notice pushed", fields: fields)
    case .gone(let reason, let refreshedBefore):
      counters[device.platform].tokensDeleted += 1
      writes.deadTokens.append((device.token, refreshedBefore))
      logger.log(.info, "push token is dead; deleting it", fields: fields + [("reason", reason)])
    case .retry(_, let reason), .reauthenticate(let reason), .giveUp(let reason), .stopProvider(let reason):
      counters[device.platform][.failed] += 1
      logger.log(
        .warn,
        claim ? "claim code not pushed; the claimant may ask for new codes" : "forward notice not pushed",
        fields: fields + [("reason", reason)])
    }
  }

  /// Applies one device's decision to its batch.
  private func applyPush(
    _ outcome: DeliveryOutcome, to device: DeviceRecord, state: inout BatchState, now: Int64
  ) -> AfterOutcome {
    let ids = state.batch.ids
    let fields: [(String, String)] = [
      ("station", state.batch.station), ("platform", device.platform.rawValue),
      ("token", redactedToken(device.token)),
    ]
    var stopReason: String?
    switch outcome.decision {
    case .delivered:
      state.accepted += 1
      delivered += 1
      counters[device.platform][.accepted] += 1
      counters.notifications += 1
      state.announced.formUnion(state.announcing[outcome.job.id] ?? [])
      markDone(ids, .of(device))
      failureWatches[device.platform]?.succeeded()
      if let environment = outcome.job.environmentToRemember(after: outcome.decision) {
        writes.apnsEnvironments.append((device.token, environment))
        logger.log(
          .debug, "apns environment remembered for the device",
          fields: fields + [("environment", environment.rawValue)])
      }
      if logger.isEnabled(.debug) {
        logger.log(.debug, "push sent", fields: fields + [("count", String(state.batch.entries.count))])
      }
    case .gone(let reason, let refreshedBefore):
      if outcome.response != nil { failureWatches[device.platform]?.succeeded() }
      state.deleted += 1
      counters[device.platform].tokensDeleted += 1
      markDone(ids, .of(device))
      writes.deadTokens.append((device.token, refreshedBefore))
      if let address = outcome.response?.refusedAddress {
        // A client aimed the server at a private network (or its host's DNS does): loud, and counted.
        counters[device.platform][.privateAddress] += 1
        let host = WebPushEndpoint(device.token)?.host ?? "?"
        logger.log(
          .warn, "push endpoint refused: its host is at a private address; deleting the subscription",
          fields: fields + [("host", host), ("address", address.description), ("reason", reason)])
      } else {
        logger.log(.info, "push token is dead; deleting it", fields: fields + [("reason", reason)])
      }
    case .retry(let at, let reason):
      counters[device.platform][.retried] += 1
      notBefore[.of(device)] = at
      state.retryAt = min(state.retryAt ?? at, at)
      logger.log(
        .warn, "push failed; will retry", fields: fields + [("reason", reason), ("inMs", String(at - now))])
      // A refusal that is not about load or an outage (401 even with fresh credentials) counts as uniform.
      if let response = outcome.response, (400..<500).contains(response.status), response.status != 429 {
        stopReason = noteFailure(device, response, reason, now: now)
      }
    case .reauthenticate(let reason):
      counters[device.platform][.retried] += 1
      let at = now + RetryPolicy.backoffMs(attempts: state.attempts, jitter: jitter())
      notBefore[.of(device)] = at
      state.retryAt = min(state.retryAt ?? at, at)
      logger.log(.warn, "push failed; will retry", fields: fields + [("reason", reason)])
    case .giveUp(let reason):
      state.gaveUp += 1
      counters[device.platform][.failed] += 1
      markDone(ids, .of(device))
      var logged = fields + [("reason", reason)]
      if let response = outcome.response { logged.append(("body", response.bodyForLog)) }
      logger.log(.warn, "push refused; not retrying", fields: logged)
      if let response = outcome.response { stopReason = noteFailure(device, response, reason, now: now) }
    case .stopProvider(let reason):
      state.skipped += 1
      providerStopped(device.platform, reason)
    }
    return stopReason.map { .stopChannel(device.platform, reason: $0) } ?? .nothing
  }

  /// Feeds a non-token failure to its provider's watch; the reason to stop the provider, if it is time.
  private func noteFailure(_ device: DeviceRecord, _ response: ProviderResponse, _ reason: String, now: Int64)
    -> String?
  {
    let platform = device.platform
    // Web Push speaks to many independent push services: one refusing is not this server's configuration.
    guard !platform.isWebPush else { return nil }
    let kind = RetryPolicy.failureKind(response, platform: platform)
    return failureWatches[platform]?.failed(kind: kind, token: device.token, detail: reason, now: now)
  }

  /// Stops a push channel the engine found misconfigured: published, logged, its waiting jobs ended.
  private func stop(_ platform: DevicePlatform, _ reason: String, now: Int64) {
    guard let channel = pushChannels[platform], channel.state == .ok else { return }
    providerStopped(platform, reason)
    for outcome in channel.stop(reason) { handle(outcome, now: now) }
  }

  func markDone(_ ids: [Int64], _ recipient: Recipient) {
    for id in ids { done[id, default: []].insert(recipient) }
  }

  /// Every device and target of the batch answered: the rows are done, failed, or due again later.
  func finish(_ id: Int, now: Int64) {
    guard let state = batches.removeValue(forKey: id) else { return }
    let ids = state.batch.ids
    if let retryAt = state.retryAt {
      for entry in state.batch.entries {
        if retryAt - entry.createdAt > options.push.maxAgeMs {
          writes.completed.append(entry.id)
          done[entry.id] = nil
          logger.info(
            "push dropped: a retry would come after maxAge",
            ["station": entry.station, "outbox": String(entry.id)])
        } else {
          writes.rescheduled.append((entry.id, retryAt))
        }
      }
      writes.released.append(contentsOf: ids)
      return
    }
    if state.accepted > 0 { counters.messages += ids.count }
    for entry in state.batch.entries where state.announced.contains(entry.id) {
      if let kind = entry.message.entry?.kind { counters.subscriptions[kind, default: 0] += 1 }
    }
    if state.accepted == 0 && state.deleted == 0 && state.gaveUp > 0 {
      writes.failed.append(contentsOf: ids)
    } else {
      writes.completed.append(contentsOf: ids)
    }
    for id in ids { done[id] = nil }
  }
}
