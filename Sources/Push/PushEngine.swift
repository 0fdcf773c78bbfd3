import Config
import Logging
import Platform
import Store

/// Everything a push sender needs besides `PushConfig`.
public struct PushServiceOptions: Sendable {
  /// The SQLite database (its outbox, devices, avatars).
  public var databasePath: String
  /// How the sender's own connection is opened.
  public var storeOptions: StoreOptions
  /// The `[messaging…]` settings.
  public var push: PushConfig
  /// Devices not refreshed (register or heartbeat) within this window get no pushes, ms.
  public var stationExpiryMs: Int64
  /// How often the outbox is read without a `notify()`, ms (pushes left from before a restart,
  /// retries that came due, pushes written by another process).
  public var pollIntervalMs: Int64
  /// Where the sender logs.
  public var logger: Logger
  /// Epoch milliseconds.
  public var clock: EpochClock
  /// Monotonic milliseconds, read beside ``clock`` to find steps of the wall clock (`WallClockSteps`) and move
  /// the outbox's waits with them; nil (the default, and for a ``clock`` moved by hand in tests) follows none.
  /// The listener and `push-worker` set `monotonicMilliseconds`.
  public var monotonic: (@Sendable () -> Int64)?
  /// The file the APNs provider token is kept in between restarts (mode 0600, this user's; see
  /// `PrivateTokenFile`); nil keeps it in memory only. `apnsTokenFile(database:)` of the database
  /// given to `init`.
  public var apnsTokenFile: String?
  /// A provider whose every push fails the same way, not because of its token, for this long is
  /// stopped (`FailureWatch`), ms.
  public var stopAfterUniformFailuresMs: Int64
  /// The VAPID private key of Web Push and UnifiedPush (made there on first start); nil when they are off.
  /// `[messaging.webpush] vapidKeyFile`, else `vapid.pem` beside the database given to `init`.
  public var vapidKeyFile: String?

  public init(
    databasePath: String, storeOptions: StoreOptions = .init(), push: PushConfig,
    stationExpiryMs: Int64 = 7 * 86_400_000, pollIntervalMs: Int64 = 1000, logger: Logger = Logger(),
    clock: @escaping EpochClock = epochMilliseconds, stopAfterUniformFailuresMs: Int64 = 10 * 60_000
  ) {
    self.databasePath = databasePath
    self.storeOptions = storeOptions
    self.push = push
    self.stationExpiryMs = stationExpiryMs
    self.pollIntervalMs = pollIntervalMs
    self.logger = logger
    self.clock = clock
    self.apnsTokenFile = Self.apnsTokenFile(database: databasePath)
    self.stopAfterUniformFailuresMs = stopAfterUniformFailuresMs
    self.vapidKeyFile = push.webPush?.keyFile(database: databasePath)
  }

  /// Where the APNs provider token of the database at `path` is kept: beside it, in the data directory
  /// the listener owns (`<database>.apns-token`).
  public static func apnsTokenFile(database path: String) -> String { path + ".apns-token" }
}

/// The providers a configuration yields: clients for those that can send, a state for each.
struct ProviderSetup {
  var clients: [DevicePlatform: any ProviderClient] = [:]
  var states: [DevicePlatform: ProviderState] = [:]
  /// Warnings of providers left off by a missing setting (published for `/health` at start).
  var warnings: [DevicePlatform: String] = [:]

  /// Loads the credentials of each configured provider; a bad file stops that provider alone.
  /// With `apnsTokenFile`, the APNs provider token is kept in that file between processes.
  init(_ config: PushConfig, logger: Logger, apnsTokenFile: String?, vapidKeyFile: String? = nil) {
    if let android = config.android {
      switch FCMClient.load(android, logger: logger) {
      case .success(let client):
        clients[.android] = client
        states[.android] = .ok
      case .failure(let error): states[.android] = .stopped(error.description)
      }
    } else {
      states[.android] = .off(config.androidOff ?? "not configured")
    }
    if let ios = config.ios {
      switch APNsClient.load(ios, logger: logger) {
      case .success(let client):
        if let apnsTokenFile {
          let file = PrivateTokenFile(path: apnsTokenFile)
          client.cache = APNsClient.TokenCache(
            load: {
              switch file.load() {
              case .success(let line): return line
              case .failure(let failure):
                logger.warn("apns provider token file not used", ["reason": failure.description])
                return nil
              }
            },
            save: { line in
              if case .failure(let failure) = file.save(line) {
                logger.warn("cannot keep the apns provider token", ["reason": failure.description])
              }
            })
        }
        clients[.ios] = client
        states[.ios] = .ok
      case .failure(let error): states[.ios] = .stopped(error.description)
      }
    } else {
      states[.ios] = .off(config.iosOff ?? "not configured")
    }
    addWebPush(config, keyFile: vapidKeyFile, logger: logger)
  }
}

/// The push thread's state: the outbox, the coalescer, the providers, one curl multi handle and
/// one database connection. Confined to the thread that runs it (see `PushService`).
///
/// Each iteration: take the finished transfers and apply their decisions; read the outbox when
/// notified, when a coalescing window closes, every poll interval, or while a backlog drains;
/// start what the providers can start; write the bookkeeping in one transaction. An outbox row
/// stays pending until every live device of its station got an answer, so a crash can repeat a
/// push but never lose one; rows are marked done only after that write succeeded.
final class PushEngine {
  /// Outbox rows read at most per query.
  static let outboxLimit = 1000

  let database: Database
  let options: PushServiceOptions
  let http: CurlMulti
  private(set) var states: [DevicePlatform: ProviderState]
  private var clients: [DevicePlatform: any ProviderClient]
  private var coalescer: Coalescer
  /// Each provider's watch for uniform non-token failures.
  private var failureWatches: [DevicePlatform: FailureWatch] = [:]
  /// Each provider's warning as last published.
  private var warnings: [DevicePlatform: String] = [:]
  private var messageIDs = PushMessageIDs()
  var logger: Logger { options.logger }
  let jitter: () -> Double

  var batches: [Int: BatchState] = [:]
  private var nextBatchID = 0
  var nextJobID = 0
  private var tags = 0
  /// The recipients (devices and forward targets, ``Recipient``) each pending outbox row was delivered to (or given
  /// up on): not sent again when the row is retried for another recipient.
  var done: [Int64: Set<Recipient>] = [:]
  /// Recipients that must not be sent to before a time (Retry-After, backoff).
  var notBefore: [Recipient: Int64] = [:]
  /// 429s in a row per token or forward target (a 429 without `Retry-After` waits 60 s, doubling with each further
  /// one); any other answer clears it.
  var throttles: [Recipient: Int] = [:]
  var writes = PendingWrites()
  /// Forwarding to the stations' email, ntfy and webhook targets (`[forward]`); nil when it is off.
  let forwarder: ForwardClient?
  /// Forward targets whose confirmation mail is on the wire (by ``Store/ForwardTarget/deliveryKey``).
  var confirming: Set<String> = []
  /// Failed tries in a row of each target's confirmation mail (by ``Store/ForwardTarget/deliveryKey``), for its
  /// backoff: 10 s, 20 s, 40 s … as a forward's. Kept in memory: a restart starts the count again.
  var confirmationFailures: [String: Int] = [:]
  /// Forward targets this sender disabled (by ``Store/ForwardTarget/deliveryKey``): never planned again, even
  /// before the write lands or the next read of the targets.
  var disabledForwards: Set<String> = []
  /// The health of each forward target as this sender last wrote it (by ``Store/ForwardTarget/deliveryKey``): ""
  /// healthy, else the failing reason; absent while unknown. A change is written once, not with every answer.
  var forwardHealth: [String: String] = [:]
  private var pollAt: Int64 = 0
  private var wakeAt: Int64?
  private var backlog = false
  private var stopping = false
  /// Steps of the wall clock (the outbox's times are wall-clock times): what waits moves with them.
  private var steps = WallClockSteps()
  /// The newest outbox row at the previous iteration (the rows there before a step found now).
  private var newestOutboxID: Int64 = 0
  /// Called whenever a provider's state changes (the service mirrors it for other threads).
  var onStateChange: (([DevicePlatform: ProviderState]) -> Void)?

  /// Pushes accepted by a provider so far.
  private(set) var delivered = 0
  /// Counters since start, published for `/metrics` (`Database.publishPushCounters`).
  var counters = PushCounters() {
    didSet { countersChanged = true }
  }
  private var countersChanged = false

  init(options: PushServiceOptions, jitter: @escaping () -> Double = { Double.random(in: 0..<1) })
    throws(PushError)
  {
    self.options = options
    self.jitter = jitter
    do throws(StoreError) {
      database = try Database(path: options.databasePath, options: options.storeOptions)
      try database.checkSchema()
    } catch {
      throw PushError("cannot open the database \(options.databasePath): \(error)")
    }
    http = try CurlMulti()
    let setup = ProviderSetup(
      options.push, logger: options.logger, apnsTokenFile: options.apnsTokenFile,
      vapidKeyFile: options.vapidKeyFile)
    clients = setup.clients
    states = setup.states
    warnings = setup.warnings
    coalescer = Coalescer(windowMs: options.push.coalesceWindowMs, maxAgeMs: options.push.maxAgeMs)
    forwarder = options.push.forward.map { ForwardClient(settings: $0, jitter: jitter) }
    for platform in DevicePlatform.allCases {
      failureWatches[platform] = FailureWatch(windowMs: options.stopAfterUniformFailuresMs)
      announce(platform)
      publishWarning(platform)
    }
  }

  /// Closes the HTTP client and the database (on the engine's thread).
  func close() {
    flush()
    http.close()
    database.close()
  }

  /// Stops reading the outbox; transfers in flight may still finish.
  func beginStop() {
    stopping = true
  }

  // MARK: One iteration

  /// Runs one iteration and returns how long the thread may wait for network activity, ms.
  func iterate(woken: Bool) -> Int {
    followWallClockSteps()
    var now = options.clock()
    for (tag, response) in http.perform() {
      if let outcome = forwarder?.handle(tag: tag, response: response, now: now) {
        handleForward(outcome, now: now)
        continue
      }
      for client in clients.values {
        if let outcomes = client.handle(tag: tag, response: response, now: now) {
          for outcome in outcomes { handle(outcome, now: now) }
          break
        }
      }
    }
    now = options.clock()
    if !stopping {
      let windowClosed = wakeAt.map { now >= $0 } ?? false
      let room = coalescer.inFlight.count < PushEngine.outboxLimit / 2
      if woken || now >= pollAt || windowClosed || (backlog && room) { pollOutbox(now: now) }
    }
    for client in clients.values {
      for outcome in client.pump(now: now, http: http, tags: &tags) { handle(outcome, now: now) }
    }
    if let forwarder {
      for outcome in forwarder.pump(now: now, http: http, tags: &tags) { handleForward(outcome, now: now) }
    }
    for (platform, client) in clients where client.warning != warnings[platform] {
      warnings[platform] = client.warning
      publishWarning(platform)
    }
    flush()
    return waitTime(now: now)
  }

  private func waitTime(now: Int64) -> Int {
    if backlog && coalescer.inFlight.count < PushEngine.outboxLimit / 2 { return 0 }
    var next = pollAt
    if let wakeAt { next = min(next, wakeAt) }
    for client in clients.values {
      if let timer = client.nextTimerAt { next = min(next, timer) }
    }
    if let timer = forwarder?.nextTimerAt { next = min(next, timer) }
    return Int(min(max(0, next - now), options.pollIntervalMs))
  }

  // MARK: Outbox

  /// A step of the wall clock since the last iteration moves the outbox rows there before it and every wait kept
  /// in memory by as much (`Database.shiftOutbox`): a coalescing window, a retry or a `Retry-After` lasts what it
  /// said, and a forward step does not drop pushes as older than `maxAge`.
  private func followWallClockSteps() {
    guard let monotonic = options.monotonic else { return }
    let step = steps.observe(wallMs: options.clock(), monotonicMs: monotonic())
    do throws(StoreError) {
      if step != 0 {
        let moved = try database.shiftOutbox(byMs: step, throughID: newestOutboxID)
        pollAt += step
        wakeAt = wakeAt.map { $0 + step }
        notBefore = notBefore.mapValues { $0 + step }
        logger.warn(
          "the wall clock stepped: pending pushes keep their waits",
          ["stepMs": String(step), "rows": String(moved)])
      }
      newestOutboxID = try database.newestOutboxID()
    } catch {
      logger.error("push: cannot follow a step of the wall clock", ["error": error.description])
    }
  }

  private func pollOutbox(now: Int64) {
    pollAt = now + options.pollIntervalMs
    guard coalescer.inFlight.count < PushEngine.outboxLimit / 2 else {
      backlog = true
      return
    }
    let due: [OutboxEntry]
    do throws(StoreError) {
      due = try database.dueOutbox(now: now, limit: PushEngine.outboxLimit)
    } catch {
      logger.error("push: cannot read the outbox", ["error": error.description])
      return
    }
    backlog = due.count == PushEngine.outboxLimit
    let plan = coalescer.plan(due: due, now: now)
    wakeAt = plan.nextWakeAt
    for entry in plan.expired where !writes.dropped.contains(entry.id) {
      writes.dropped.insert(entry.id)
      writes.completed.append(entry.id)
      done[entry.id] = nil
      logger.info(
        "push dropped: older than maxAge",
        ["station": entry.station, "outbox": String(entry.id), "ageMs": String(now - entry.createdAt)])
    }
    if forwarder != nil && !stopping { pollConfirmations(now: now) }
    if !clients.isEmpty && !stopping { pollClaimCodes(now: now) }
    // No provider configured: keep the rows (they go out if credentials arrive and the listener
    // restarts before they pass maxAge); only drop the expired ones, and look again in a minute. With forwarding
    // on, `prepare` forwards what the stations' targets take and keeps the rest the same way.
    guard !clients.isEmpty || forwarder != nil else {
      coalescer.finished(plan.batches.flatMap(\.ids))
      pollAt = now + max(options.pollIntervalMs, 60_000)
      wakeAt = nil
      return
    }
    for batch in plan.batches { prepare(batch, now: now) }
  }

  /// Builds the batch's content and one job per live device. Entries the station's mute or quiet hours hold
  /// (`quietSplit`) are not pushed to the devices its claim governs; its earlier keyless devices get them as they
  /// would without the claim (``QuietSplit/guestEntries``); an entry nobody is pushed is done without a push.
  ///
  /// The station's forward targets get the batch's received messages too (``forwardPlan(_:pushable:)``: those
  /// the quiet split lets through, or all of them for a target with `always`), as jobs of the same batch: the rows
  /// stay pending until every device and target answered, and a retry of either reschedules them.
  private func prepare(_ whole: PushBatch, now: Int64) {
    let split = quietSplit(whole, now: now)
    let forwards = forwardPlan(whole, pushable: split.batch)
    let forwarded = Set(forwards.map(\.entry.id))
    if clients.isEmpty {
      // No push provider: the rows no target takes wait as they always did.
      coalescer.finished(whole.ids.filter { !forwarded.contains($0) })
      if forwarded.isEmpty { return }
    }
    // Held entries stay in the batch: an earlier keyless device may still get them; with none, the batch finishes
    // them.
    let pushable = clients.isEmpty ? [] : Set(split.guestEntries.map(\.id) + (split.batch?.ids ?? []))
    let kept = whole.entries.filter { pushable.contains($0.id) || forwarded.contains($0.id) }
    if !clients.isEmpty {
      for entry in whole.entries where !pushable.contains(entry.id) && !forwarded.contains(entry.id) {
        writes.completed.append(entry.id)
        done[entry.id] = nil
      }
    }
    guard !kept.isEmpty else { return }
    let id = nextBatchID
    nextBatchID += 1
    var state = BatchState(
      batch: PushBatch(station: whole.station, entries: kept), attempts: kept.map(\.attempts).max() ?? 0)
    enqueueForwards(forwards, batchID: id, state: &state, now: now)
    let pushed = whole.entries.filter { pushable.contains($0.id) }
    guard !pushed.isEmpty else {
      batches[id] = state
      if state.pending == 0 { finish(id, now: now) }
      return
    }
    let batch = PushBatch(station: whole.station, entries: pushed)
    let newest = batch.newest
    let governed = Set(split.batch?.ids ?? [])
    // Each device sees the entries of its rings (`PushAudience`) among those its class may be pushed (a governed
    // device what the holds let through, another one ``QuietSplit/guestEntries``): its push is built from those,
    // counted with its wants, once per distinct view. A device without wants gets exactly the push it always got
    // (or none); a device that sees nothing of the batch gets none.
    let devices: [DeviceRecord]
    let views: [PushViewKey: PushView]
    do throws(StoreError) {
      // One snapshot for the devices and the content, so the count, the senders and the avatar agree.
      (devices, views) = try database.readSnapshot { () throws(StoreError) in
        let devices = try database.devices(of: batch.station, refreshedSince: now - options.stationExpiryMs)
        var views: [PushViewKey: PushView] = [:]
        for device in devices {
          let key = PushViewKey(device, governed: split.governs(device))
          guard views[key] == nil else { continue }
          let entries = key.governed ? batch.entries.filter { governed.contains($0.id) } : split.guestEntries
          let visible = PushAudience.visible(entries, to: key.wants)
          guard !visible.isEmpty else { continue }
          views[key] = PushView(
            ids: visible.map(\.id), content: try pushContent(batch.station, visible, wants: key.wants))
        }
        return (devices, views)
      }
    } catch {
      logger.error("push: cannot read the station", ["station": batch.station, "error": error.description])
      // Tried again later (the forwards already queued go on; the devices' pushes wait for the retry).
      state.retryAt = now + RetryPolicy.minimumBackoffMs
      batches[id] = state
      if state.pending == 0 { finish(id, now: now) }
      return
    }
    let expiresAt = newest.createdAt + options.push.maxAgeMs
    let ttlSeconds = max(1, (expiresAt - now) / 1000)
    for device in devices {
      let platform = device.platform
      // Nothing in this batch for a device that did not ask for what it holds.
      guard let view = views[PushViewKey(device, governed: split.governs(device))] else { continue }
      let content = view.content
      guard let client = clients[platform], client.state == .ok else {
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
      let (built, headers) = payload(content, for: device, expiresAt: expiresAt, ttlSeconds: ttlSeconds)
      switch built {
      case .failure(let error):
        state.gaveUp += 1
        logger.error(
          "push not sent: payload too large", ["station": batch.station, "bytes": String(error.bytes)])
      case .success(let payload):
        let job = SendJob(
          id: nextJobID, batchID: id, device: device, payload: payload.bytes, headers: headers,
          topic: content.entry == nil ? nil : content.collapseName, attempts: state.attempts,
          throttles: throttles[.of(device)] ?? 0, expiresAt: expiresAt)
        state.announcing[nextJobID] = view.ids
        nextJobID += 1
        client.enqueue(job)
        state.pending += 1
      }
    }
    batches[id] = state
    if state.pending == 0 { finish(id, now: now) }
  }

  /// The request body (FCM) or payload (APNs, Web Push) of `content` for `device`, and its headers.
  private func payload(_ content: PushContent, for device: DeviceRecord, expiresAt: Int64, ttlSeconds: Int64)
    -> (Result<BuiltPayload, PayloadTooLarge>, [(String, String)])
  {
    switch device.platform {
    case .android:
      return (
        PushPayload.fcm(content, token: device.token, preview: options.push.preview, ttlSeconds: ttlSeconds),
        []
      )
    case .ios:
      // Each push its own `gcm.message_id` (FlutterFire hands only such pushes to the app).
      return (
        PushPayload.apns(content, preview: options.push.preview, messageID: messageIDs.next()),
        PushPayload.apnsHeaders(
          station: content.station, bundleId: options.push.ios?.bundleId ?? "", expiration: expiresAt / 1000,
          collapseID: content.collapseID, priority: content.priority)
      )
    case .webpush, .unifiedpush:
      return (
        WebPushPayload.body(content, preview: options.push.preview, encrypted: device.webPushKeys != nil),
        WebPushPayload.headers(ttlSeconds: ttlSeconds, priority: content.priority)
      )
    }
  }

  /// Whether a push to a device of `platform` can go now (its provider configured and not stopped).
  func clientReady(for platform: DevicePlatform) -> Bool { clients[platform]?.state == .ok }

  /// Sends `content`, a notice with no outbox row behind it (a claim code), to `device`; its outcome is only
  /// logged and counted (``handleNotice(_:)``): a lost notice is asked for again by whoever needs it.
  func enqueueNotice(_ content: PushContent, to device: DeviceRecord, expiresAt: Int64, now: Int64) {
    guard let client = clients[device.platform], client.state == .ok else { return }
    let (built, headers) = payload(
      content, for: device, expiresAt: expiresAt, ttlSeconds: max(1, (expiresAt - now) / 1000))
    guard case .success(let payload) = built else {
      logger.error("notice not sent: payload too large", ["station": content.station])
      return
    }
    client.enqueue(
      SendJob(
        id: nextJobID, batchID: Self.claimNoticeBatchID, device: device, payload: payload.bytes,
        headers: headers,
        topic: content.collapseName, expiresAt: expiresAt))
    nextJobID += 1
  }

  /// A notice's outcome: counted and logged; a dead token is deleted as after any push.
  private func handleNotice(_ outcome: JobOutcome) {
    let device = outcome.job.device
    let claim = outcome.job.topic?.hasSuffix("-forward") != true
    let fields: [(String, String)] = [
      ("station", device.station), ("platform", device.platform.rawValue),
      ("token", redactedToken(device.token)),
    ]
    switch outcome.decision {
    case .delivered:
      counters[device.platform][.accepted] += 1
      logger.log(.info, claim ? "claim code pushed" : "forward notice pushed", fields: fields)
    case .deleteToken(let reason, let refreshedBefore):
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

  /// What a push of `entries` (one station's, oldest first: those a device with `wants` sees) says, read inside
  /// the caller's snapshot: the newest entry (and, for a subscription entry, what it is), the count of what the
  /// station has not pulled as `wants` counts it (other-SSID and subscription entries only for devices that take
  /// them) and never less than this burst, the senders, the newest sender's avatar, the priority; for a sent
  /// message, its `sendFailed` notice.
  private func pushContent(_ station: String, _ entries: [OutboxEntry], wants: Wants) throws(StoreError)
    -> PushContent
  {
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
    return PushContent(
      station: station, fromCall: newest.message.peer, seqId: newest.message.msgno, text: newest.message.text,
      count: max(unpulled, entries.count), senders: senders, avatar: avatar, to: newest.message.to,
      entry: newest.message.entry, priority: PushAudience.priority(of: entries))
  }

  /// Applies one device's decision to its batch.
  private func handle(_ outcome: JobOutcome, now: Int64) {
    if outcome.job.batchID == Self.claimNoticeBatchID { return handleNotice(outcome) }
    guard var state = batches[outcome.job.batchID] else { return }
    let device = outcome.job.device
    let ids = state.batch.ids
    let fields: [(String, String)] = [
      ("station", state.batch.station), ("platform", device.platform.rawValue),
      ("token", redactedToken(device.token)),
    ]
    var stopReason: String?
    if let response = outcome.response, response.transportError == nil {
      throttles[.of(device)] = response.status == 429 ? (throttles[.of(device)] ?? 0) + 1 : nil
    }
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
    case .deleteToken(let reason, let refreshedBefore):
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
        stopReason = noteFailure(outcome, response, reason, now: now)
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
      if let response = outcome.response { stopReason = noteFailure(outcome, response, reason, now: now) }
    case .stopProvider(let reason):
      state.skipped += 1
      providerStopped(device.platform, reason)
    }
    state.pending -= 1
    batches[outcome.job.batchID] = state
    if state.pending == 0 { finish(outcome.job.batchID, now: now) }
    if let stopReason { stop(device.platform, stopReason, now: now) }
  }

  /// Feeds a non-token failure to its provider's watch; the reason to stop the provider, if it is time.
  private func noteFailure(_ outcome: JobOutcome, _ response: ProviderResponse, _ reason: String, now: Int64)
    -> String?
  {
    let platform = outcome.job.device.platform
    // Web Push speaks to many independent push services: one refusing is not this server's configuration.
    guard !platform.isWebPush else { return nil }
    let kind = RetryPolicy.failureKind(response, platform: platform)
    return failureWatches[platform]?.failed(
      kind: kind, token: outcome.job.device.token, detail: reason, now: now)
  }

  /// Stops a provider the engine found misconfigured: published, logged, its waiting jobs ended.
  private func stop(_ platform: DevicePlatform, _ reason: String, now: Int64) {
    guard let client = clients[platform], client.state == .ok else { return }
    providerStopped(platform, reason)
    for outcome in client.stop(reason) { handle(outcome, now: now) }
  }

  func markDone(_ ids: [Int64], _ recipient: Recipient) {
    for id in ids { done[id, default: []].insert(recipient) }
  }

  /// Every device of the batch answered: the rows are done, failed, or due again later.
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

  /// Writes the round's bookkeeping and counters in one transaction; on failure both are kept for the next try.
  private func flush() {
    guard countersChanged || !writes.isEmpty else { return }
    do throws(StoreError) {
      try database.writeBatch { () throws(StoreError) in
        if countersChanged { try database.publishPushCounters(counters) }
        try database.disableForwardTargets(writes.disabledTargets, now: options.clock())
        try database.recordForwardHealth(writes.forwardHealth, now: options.clock())
        try database.applyPushResults(
          completed: writes.completed, failed: writes.failed,
          rescheduled: writes.rescheduled.map { (id: $0.0, nextAttemptAt: $0.1) },
          deadTokens: writes.deadTokens.map { (token: $0.0, refreshedBefore: $0.1) },
          apnsEnvironments: writes.apnsEnvironments.map { (token: $0.0, environment: $0.1) })
      }
      countersChanged = false
      guard !writes.isEmpty else { return }
      coalescer.finished(writes.completed + writes.failed + writes.released)
      writes = PendingWrites()
      if notBefore.count > 10_000 {
        let now = options.clock()
        notBefore = notBefore.filter { $0.value > now }
        throttles = throttles.filter { notBefore[$0.key] != nil }
      }
    } catch {
      logger.error("push: cannot record results; retrying", ["error": error.description])
    }
  }

  // MARK: Provider state

  private func providerStopped(_ platform: DevicePlatform, _ reason: String) {
    if case .stopped = states[platform] { return }
    states[platform] = .stopped(reason)
    announce(platform)
  }

  /// Logs a provider's state and publishes it (for `/health`).
  private func announce(_ platform: DevicePlatform) {
    let state = states[platform] ?? .off("not configured")
    switch state {
    case .ok: logger.info("push provider ready", ["platform": platform.rawValue])
    case .off(let reason):
      logger.info("push is off for this platform", ["platform": platform.rawValue, "reason": reason])
    case .stopped(let reason):
      logger.error("push provider stopped", ["platform": platform.rawValue, "reason": reason])
    }
    do throws(StoreError) {
      try database.publishPushState(state.published, for: platform)
    } catch {
      logger.error("push: cannot publish the provider state", ["error": error.description])
    }
    onStateChange?(states)
  }

  /// Logs nothing (the client did) and publishes a provider's warning (for `/health`).
  private func publishWarning(_ platform: DevicePlatform) {
    do throws(StoreError) {
      try database.publishPushWarning(warnings[platform], for: platform)
    } catch {
      logger.error("push: cannot publish the provider warning", ["error": error.description])
    }
  }
}

/// One batch's progress.
struct BatchState {
  var batch: PushBatch
  var attempts: Int
  var pending = 0
  var accepted = 0
  var deleted = 0
  var gaveUp = 0
  var skipped = 0
  var retryAt: Int64?
  /// The outbox ids each job's push announces (by job id).
  var announcing: [Int: [Int64]] = [:]
  /// The outbox ids a provider accepted a push for (counted by kind when the batch is done).
  var announced: Set<Int64> = []
}

/// Which devices share one push of a batch: the same wants, and whether the station's claim governs them
/// (``QuietSplit/governs(_:)``).
private struct PushViewKey: Hashable {
  var wants: Wants
  var governed: Bool

  init(_ device: DeviceRecord, governed: Bool) {
    wants = PushAudience.wants(of: device)
    self.governed = governed
  }
}

/// The push the devices of one ``PushViewKey`` get of a batch: the entries they see and what it says.
private struct PushView {
  var ids: [Int64]
  var content: PushContent
}

/// Database writes of one round.
struct PendingWrites {
  var completed: [Int64] = []
  var failed: [Int64] = []
  var rescheduled: [(Int64, Int64)] = []
  /// Rescheduled rows, released from the coalescer after the write.
  var released: [Int64] = []
  var deadTokens: [(String, Int64?)] = []
  /// iOS devices whose accepting APNs environment is to be remembered.
  var apnsEnvironments: [(String, APNsEnvironment)] = []
  var dropped: Set<Int64> = []
  /// Forward targets found dead (404/410, ntfy 401/403, an address the SMTP server refused for good, a private
  /// address).
  var disabledTargets: [ForwardDisable] = []
  /// Forward targets that began failing for a passing reason, or were delivered to again.
  var forwardHealth: [ForwardHealth] = []

  var isEmpty: Bool {
    completed.isEmpty && failed.isEmpty && rescheduled.isEmpty && deadTokens.isEmpty && released.isEmpty
      && apnsEnvironments.isEmpty && disabledTargets.isEmpty && forwardHealth.isEmpty
  }
}
