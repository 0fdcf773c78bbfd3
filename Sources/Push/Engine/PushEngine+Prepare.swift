import Store

/// Everything one batch needs, read in one snapshot: the quiet split (the station's settings and claim), the
/// forward targets' share, the live devices and the push each distinct view of them gets.
struct BatchRead {
  var split: QuietSplit
  var forwards: [ForwardPlanItem]
  /// The ids of the entries some device may be pushed (``PushEngine/pushableIDs(_:)``).
  var pushable: Set<Int64> = []
  var devices: [DeviceRecord] = []
  var views: [PushViewKey: PushView] = [:]
}

extension PushEngine {
  /// Builds the batch's content and one job per live device. Entries the station's mute or quiet hours hold
  /// (`quietSplit`) are not pushed to the devices its claim governs; its earlier keyless devices get them as they
  /// would without the claim (``QuietSplit/guestEntries``); an entry nobody is pushed is done without a push.
  ///
  /// The station's forward targets get the batch's received messages too (``forwardPlan(_:pushable:)``: those
  /// the quiet split lets through, or all of them for a target with `always`), as jobs of the same batch: the rows
  /// stay pending until every device and target answered, and a retry of either reschedules them.
  ///
  /// What the batch needs is read in one snapshot (``readBatch(_:now:)``), so the settings, the targets, the
  /// devices, the count, the senders and the avatar agree; when it cannot be read the whole batch is tried again
  /// after the minimum backoff.
  func prepare(_ whole: PushBatch, now: Int64) {
    let read: BatchRead
    do throws(StoreError) {
      read = try database.readSnapshot { () throws(StoreError) in try readBatch(whole, now: now) }
    } catch {
      logger.error("push: cannot read the station", ["station": whole.station, "error": error.description])
      let id = newBatchID()
      var state = BatchState(batch: whole, attempts: whole.entries.map(\.attempts).max() ?? 0)
      state.retryAt = now + RetryPolicy.minimumBackoffMs
      batches[id] = state
      finish(id, now: now)
      return
    }
    let split = read.split
    let forwarded = Set(read.forwards.map(\.entry.id))
    if pushChannels.isEmpty {
      // No push provider: the rows no target takes wait as they always did.
      coalescer.finished(whole.ids.filter { !forwarded.contains($0) })
      if forwarded.isEmpty { return }
    }
    // Held entries stay in the batch: an earlier keyless device may still get them; with none, the batch finishes
    // them.
    let pushable = read.pushable
    let kept = whole.entries.filter { pushable.contains($0.id) || forwarded.contains($0.id) }
    if !pushChannels.isEmpty {
      for entry in whole.entries where !pushable.contains(entry.id) && !forwarded.contains(entry.id) {
        writes.completed.append(entry.id)
        done[entry.id] = nil
      }
    }
    guard !kept.isEmpty else { return }
    let id = newBatchID()
    var state = BatchState(
      batch: PushBatch(station: whole.station, entries: kept), attempts: kept.map(\.attempts).max() ?? 0)
    enqueueForwards(read.forwards, batchID: id, state: &state, now: now)
    let pushed = whole.entries.filter { pushable.contains($0.id) }
    if !pushed.isEmpty {
      let expiresAt =
        PushBatch(station: whole.station, entries: pushed).newest.createdAt + options.push.maxAgeMs
      enqueuePushes(read, expiresAt: expiresAt, batchID: id, state: &state, now: now)
    }
    batches[id] = state
    if state.pending == 0 { finish(id, now: now) }
  }

  /// The ids of the entries some device may be pushed: the quiet split's batch and its guests' entries; none
  /// without a push channel.
  private func pushableIDs(_ split: QuietSplit) -> Set<Int64> {
    pushChannels.isEmpty ? [] : Set(split.guestEntries.map(\.id) + (split.batch?.ids ?? []))
  }

  /// Reads, inside the caller's snapshot, everything `whole` needs. Each device sees the entries of its rings
  /// (`PushAudience`) among those its class may be pushed (a governed device what the holds let through, another
  /// one ``QuietSplit/guestEntries``): its push is built from those, counted with its wants, once per distinct
  /// view. A device without wants gets exactly the push it always got (or none); a device that sees nothing of
  /// the batch gets none.
  func readBatch(_ whole: PushBatch, now: Int64) throws(StoreError) -> BatchRead {
    let split = quietSplit(whole, now: now)
    var read = BatchRead(split: split, forwards: forwardPlan(whole, pushable: split.batch))
    read.pushable = pushableIDs(split)
    let pushed = whole.entries.filter { read.pushable.contains($0.id) }
    guard !pushed.isEmpty else { return read }
    let station = whole.station
    let governed = Set(split.batch?.ids ?? [])
    read.devices = try database.devices(of: station, refreshedSince: now - options.stationExpiryMs)
    for device in read.devices {
      let key = PushViewKey(device, governed: split.governs(device))
      guard read.views[key] == nil else { continue }
      let entries = key.governed ? pushed.filter { governed.contains($0.id) } : split.guestEntries
      let visible = PushAudience.visible(entries, to: key.wants)
      guard !visible.isEmpty else { continue }
      read.views[key] = PushView(
        ids: visible.map(\.id),
        content: try pushContent(station, visible, wants: key.wants, airAnswered: split.airAnswered))
    }
    return read
  }

  /// Queues one push per device of `read` that sees something of the batch, is neither done nor waiting for a
  /// retry (a waiting one sets the batch's retry time), and whose channel sends; counting each in `state.pending`.
  private func enqueuePushes(
    _ read: BatchRead, expiresAt: Int64, batchID: Int, state: inout BatchState, now: Int64
  ) {
    let ttlSeconds = max(1, (expiresAt - now) / 1000)
    for device in read.devices {
      // Nothing in this batch for a device that did not ask for what it holds.
      guard let view = read.views[PushViewKey(device, governed: read.split.governs(device))] else { continue }
      let content = view.content
      guard let channel = pushChannels[device.platform], channel.state == .ok else {
        state.skipped += 1
        continue
      }
      if view.ids.allSatisfy({ done[$0]?.contains(.of(device)) == true }) { continue }
      if let time = notBefore[.of(device)] {
        if time > now {
          state.retryAt = min(state.retryAt ?? time, time)
          continue
        }
        notBefore[.of(device)] = nil
      }
      let (built, headers) = channel.body(content, for: device, expiresAt: expiresAt, ttlSeconds: ttlSeconds)
      switch built {
      case .failure(let error):
        state.gaveUp += 1
        logger.error(
          "push not sent: payload too large", ["station": device.station, "bytes": String(error.bytes)])
      case .success(let payload):
        let job = DeliveryJob(
          id: newJobID(), purpose: .batch(batchID), recipient: .device(device), payload: payload.bytes,
          headers: headers, topic: content.entry == nil ? nil : content.collapseName,
          attempts: state.attempts,
          throttles: throttles[.of(device)] ?? 0, expiresAt: expiresAt)
        state.announcing[job.id] = view.ids
        channel.enqueue(job)
        state.pending += 1
      }
    }
  }

  /// Whether a push to a device of `platform` can go now (its channel configured and not stopped).
  func clientReady(for platform: DevicePlatform) -> Bool { pushChannels[platform]?.state == .ok }

  /// Sends `content`, a notice with no outbox row behind it (a claim code, a disabled forward target), to
  /// `device`; its outcome is only logged and counted (``handleNotice(_:_:)``): a lost notice is asked for again
  /// by whoever needs it.
  func enqueueNotice(
    _ content: PushContent, _ notice: DeliveryPurpose.Notice, to device: DeviceRecord, expiresAt: Int64,
    now: Int64
  ) {
    guard let channel = pushChannels[device.platform], channel.state == .ok else { return }
    let (built, headers) = channel.body(
      content, for: device, expiresAt: expiresAt, ttlSeconds: max(1, (expiresAt - now) / 1000))
    guard case .success(let payload) = built else {
      logger.error("notice not sent: payload too large", ["station": content.station])
      return
    }
    channel.enqueue(
      DeliveryJob(
        id: newJobID(), purpose: .notice(notice), recipient: .device(device), payload: payload.bytes,
        headers: headers, topic: content.collapseName, expiresAt: expiresAt))
  }

  /// What a push of `entries` (one station's, oldest first: those a device with `wants` sees) says, read inside
  /// the caller's snapshot: the newest entry (and, for a subscription entry, what it is), the count of what the
  /// station has not pulled as `wants` counts it (other-SSID and subscription entries only for devices that take
  /// them) and never less than this burst, the senders, the newest sender's avatar, the priority; for a sent
  /// message, its `sendFailed` notice.
  private func pushContent(
    _ station: String, _ entries: [OutboxEntry], wants: Wants, airAnswered: AirAnswered = .quiet
  ) throws(StoreError) -> PushContent {
    let newest = PushBatch(station: station, entries: entries).newest
    if newest.message.direction == .sent {  // a message the station sent ended rejected or expired
      return .sendFailed(
        station: station, to: newest.message.peer, seqId: newest.message.msgno, text: newest.message.text,
        state: newest.message.state ?? .expired)
    }
    // Messages evicted before anyone pulled them still came: `count` is at least what is waiting.
    let unpulled =
      try database.unpulledCount(station: station, wants: wants)
      + database.droppedSinceCursor(station: station)
    let senders = try database.unpulledSenders(station: station, wants: wants)
    let avatar = try database.pushAvatar(of: newest.message.peer)
    // `count` never under-counts the banner it replaces: at least this burst, even when another device of the
    // station synced it already.
    var content = PushContent(
      station: station, fromCall: newest.message.peer, seqId: newest.message.msgno, text: newest.message.text,
      count: max(unpulled, entries.count), senders: senders, avatar: avatar, to: newest.message.to,
      entry: newest.message.entry, priority: PushAudience.priority(of: entries, airAnswered: airAnswered))
    if let room = newest.message.entry?.room {
      // A room's digest: the window's entries of that room (held until it ended: `roomDigestHold`).
      content.roomCount = entries.filter { $0.message.entry?.room == room }.count
    }
    return content
  }
}
