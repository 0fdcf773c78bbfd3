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
  /// How often the outbox is read without a `notify()`, ms (pushes left from before a restart, claim codes and
  /// confirmation mails written by another process). A retry that comes due sooner wakes the sender at its time
  /// (`Database.nextOutboxAttempt(after:)`).
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
  /// The push channels of the device platforms that are configured.
  private(set) var pushChannels: [DevicePlatform: any PushChannel]
  /// The forward channels (ntfy, webhook, email) when `[forward]` is on, else empty.
  private(set) var forwardChannels: [ForwardKind: ForwardChannel] = [:]
  /// The slots the channels to endpoints anyone may name share (docs/design.md "Fair delivery slots").
  let slots: SlotPool
  /// Every channel, push channels first: what each iteration drives.
  private var channels: [any DeliveryChannel] = []
  var coalescer: Coalescer
  /// Each provider's watch for uniform non-token failures.
  var failureWatches: [DevicePlatform: FailureWatch] = [:]
  /// Each provider's warning as last published.
  private var warnings: [DevicePlatform: String] = [:]
  var logger: Logger { options.logger }
  let jitter: () -> Double

  var batches: [Int: BatchState] = [:]
  private var nextBatchID = 0
  private var nextJobID = 0
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
  /// `[forward]`: forwarding to the stations' email, ntfy and webhook targets; nil when it is off.
  var forwarding: PushConfig.Forward? { options.push.forward }
  /// Forward targets whose confirmation mail is on the wire.
  var confirming: Set<Recipient> = []
  /// Failed tries in a row of each target's confirmation mail, for its backoff: 10 s, 20 s, 40 s … as a
  /// forward's. Kept in memory: a restart starts the count again.
  var confirmationFailures: [Recipient: Int] = [:]
  /// Forward targets this sender disabled: never planned again, even before the write lands or the next read of
  /// the targets.
  var disabledForwards: Set<Recipient> = []
  /// The health of each forward target as this sender last wrote it: "" healthy, else the failing reason; absent
  /// while unknown. A change is written once, not with every answer.
  var forwardHealth: [Recipient: String] = [:]
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
  var delivered = 0
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
    let pool = SlotPool()
    slots = pool
    let setup = ChannelSetup(
      options.push, logger: options.logger, apnsTokenFile: options.apnsTokenFile,
      vapidKeyFile: options.vapidKeyFile, slots: pool)
    pushChannels = setup.clients
    states = setup.states
    warnings = setup.warnings
    coalescer = Coalescer(windowMs: options.push.coalesceWindowMs, maxAgeMs: options.push.maxAgeMs)
    if let forward = options.push.forward {
      for channel in ForwardChannel.all(settings: forward, slots: pool, jitter: jitter) {
        forwardChannels[channel.forwardKind] = channel
      }
    }
    channels =
      DevicePlatform.allCases.compactMap { pushChannels[$0] }
      + ForwardKind.allCases.compactMap { forwardChannels[$0] }
    for platform in DevicePlatform.allCases {
      failureWatches[platform] = FailureWatch(windowMs: options.stopAfterUniformFailuresMs)
      announce(platform)
      publishWarning(platform)
    }
  }

  /// A new job id (unique per engine).
  func newJobID() -> Int {
    defer { nextJobID += 1 }
    return nextJobID
  }

  /// A new batch id (unique per engine).
  func newBatchID() -> Int {
    defer { nextBatchID += 1 }
    return nextBatchID
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
      for channel in channels {
        if let outcomes = channel.handle(tag: tag, response: response, now: now) {
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
    for channel in channels {
      for outcome in channel.pump(now: now, http: http, tags: &tags) { handle(outcome, now: now) }
    }
    for (platform, client) in pushChannels where client.warning != warnings[platform] {
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
    for channel in channels {
      if let timer = channel.nextTimerAt { next = min(next, timer) }
    }
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
    // Asleep until the next retry comes due, not until the next look: a retry goes at its time, and the look
    // itself (for writes of other processes that did not wake this one) can be rare.
    do throws(StoreError) {
      if let next = try database.nextOutboxAttempt(after: now) { pollAt = min(pollAt, next) }
    } catch {
      logger.error("push: cannot read the outbox", ["error": error.description])
    }
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
    if forwarding != nil && !stopping { pollConfirmations(now: now) }
    if !pushChannels.isEmpty && !stopping { pollClaimCodes(now: now) }
    // No provider configured: keep the rows (they go out if credentials arrive and the listener
    // restarts before they pass maxAge); only drop the expired ones, and look again in a minute. With forwarding
    // on, `prepare` forwards what the stations' targets take and keeps the rest the same way.
    guard !pushChannels.isEmpty || forwarding != nil else {
      coalescer.finished(plan.batches.flatMap(\.ids))
      pollAt = now + max(options.pollIntervalMs, 60_000)
      wakeAt = nil
      return
    }
    for batch in plan.batches { prepare(batch, now: now) }
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

  func providerStopped(_ platform: DevicePlatform, _ reason: String) {
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
