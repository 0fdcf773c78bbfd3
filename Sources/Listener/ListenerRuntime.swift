import APRS
import CompanionFiles
import Config
import Logging
import Platform
import Store
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The whole listener: host lock and lease (``acquireHostLock(databasePath:)``, ``acquireLease(_:)``), threads,
/// shutdown.
///
/// Threads (each with its own database connection where it needs one):
/// - connection (``ConnectionDriver``): the socket, the state machine, ACK and filter writes;
/// - writer (``WriterWorker``): batches of lines → one `storeMessages` transaction → ACK decisions → ACK lines back
///   to the connection, and the ``OutboxNotifier``;
/// - registration watcher (``RegistrationWatcher``): `PRAGMA data_version`, debounced, → the station change log →
///   the live stations (``StationRegistry``) and the one `#filter` line;
/// - housekeeper (``Housekeeper``): lease renewal, state published to `meta`, pruning;
/// - device ACKs (``DeviceAckWorker``): the ACKs of messages a device pulled (`ackPolicy` `device`) → the connection;
/// - wake (``startWakeReader(_:wakes:)``): the responder's datagrams (``CompanionFiles/WakeSocket/Role/listener``) → the watcher, the
///   sender and the device ACK worker, which sleep on them (``WorkerSignals``) instead of polling the database.
///
/// At idle every thread sleeps until a real deadline (the watchdog, the lease, the beacon, housekeeping, expiry) or
/// an event (a line, a wake datagram, a change of the database file): docs/operating.md "Idle".
///
/// Stopping (``requestStop(status:)``, from a signal or a lost lease): the connection closes (no more reading), the
/// writer commits everything already queued, the state is published a last time and the lease released.
public final class ListenerRuntime: Sendable {
  /// How the runtime is set up.
  public struct Options: Sendable {
    public var config: ListenerConfig
    /// The login in use (the configured one, or a generated receive-only name).
    public var login: String
    /// Wait for the lease instead of exiting when a listener on another host holds it (one on this host is always
    /// waited for).
    public var standby = false
    /// This process's lease identity (`host:pid:random`, ``LeaseHolder``).
    public var holder: String

    public init(config: ListenerConfig, login: String, standby: Bool, holder: String) {
      self.config = config
      self.login = login
      self.standby = standby
      self.holder = holder
    }
  }

  let options: Options
  let logger: Logger
  let notifier: (any OutboxNotifier)?
  /// The counters (shared by every thread; tests and benchmarks read them).
  let counters = ListenerCounters()
  let stopRequested = Latch()
  /// What is wrong right now (storage, lease, the database file), for the beacon and the ACK gate.
  let health = ListenerHealth()
  private let exitStatus = Atomic<Int32>(0)

  public init(options: Options, logger: Logger, notifier: (any OutboxNotifier)? = nil) {
    self.options = options
    self.logger = logger
    self.notifier = notifier
  }

  /// Asks the listener to stop; ``run()`` then returns `status` (the first request's status wins).
  public func requestStop(status: Int32 = 0) {
    guard !stopRequested.value else { return }
    exitStatus.store(status, ordering: .sequentiallyConsistent)
    stopRequested.set()
  }

  /// Runs until stopped; returns the exit status (0: stopped by request, 1: could not start or lost the lease).
  public func run() -> Int32 {
    let config = options.config
    // Every commit (stored messages, send states, subscription entries) wakes the responder's held long polls.
    var storeOptions = StoreOptions(
      busyTimeoutMs: Int32(clamping: config.server.busyTimeoutMs), ringSize: config.server.ringSize,
      maxUnpulledPerStation: config.server.maxUnpulledPerStation)
    storeOptions.commitNotice = .wakingLongPolls(of: config.server.database)
    // Never beside processes still using another file at this path (docs/design.md "Faults"): held until the end.
    let users: DatabaseUsers
    do throws(FileLockError) {
      users = try DatabaseUsers(databasePath: config.server.database)
      guard
        let moved = try users.join(
          shouldStop: { stopRequested.value },
          waiting: { logger.warn($0, ["database": config.server.database]) })
      else { return exitStatus.load(ordering: .relaxed) }
      if !moved.isEmpty {
        logger.warn(
          "the database file was replaced or deleted since its last users ran; their write-ahead log is kept"
            + " aside, not applied to this file", ["moved": moved.joined(separator: ",")])
      }
    } catch {
      logger.error("cannot use the database's users file", ["error": error.description])
      return 1
    }
    defer { users.close() }
    let database: Database
    do {
      database = try Database(path: config.server.database, options: storeOptions)
      try database.migrate()
    } catch {
      logger.error(
        "cannot open the database", ["database": config.server.database, "error": error.description])
      return 1
    }
    defer { database.close() }

    // Held until the process ends (the kernel drops it then, however the process ends).
    guard let hostLock = acquireHostLock(databasePath: config.server.database) else {
      return stopRequested.value ? exitStatus.load(ordering: .relaxed) : 1
    }
    defer { hostLock.close() }
    guard acquireLease(database) else { return stopRequested.value ? exitStatus.load(ordering: .relaxed) : 1 }
    // The dedup windows and ACK times go on from the newest the database holds (a backward step of the wall
    // clock while the listener was down cannot put them in its future): see `steadyEpochMilliseconds()`.
    do throws(StoreError) {
      raiseSteadyClock(toAtLeast: try database.steadyClockFloor())
    } catch {
      logger.warn("cannot read the steady clock's floor", ["error": error.description])
    }
    let startedAt = epochMilliseconds()
    let lifecycle = notifier as? any OutboxNotifierLifecycle
    lifecycle?.listenerStarted()
    defer { lifecycle?.listenerStopped() }

    // Everything the threads share.
    let shared = SharedState()
    let queue = LineQueue(capacity: config.queueSize, byteCapacity: config.queueBytes)
    guard let wake = WakePipe() else {
      logger.error("cannot create a pipe")
      try? database.releaseLease(holder: options.holder)
      return 1
    }
    let wakeSocket = bindWakeSocket()
    defer { wakeSocket?.close() }
    let wakes = WorkerSignals(listening: wakeSocket != nil)
    let watcherStopped = Latch()
    let watcher = RegistrationWatcher(
      database: database, expiryMs: config.server.stationExpiryMs, trackOutgoing: config.trackOutgoing,
      pollMs: wakes.pollMs(.registrations, withoutSocket: config.registrationPollMs),
      registry: shared.stations,
      logger: logger, stopped: watcherStopped, debounceMs: wakes.listening ? config.registrationPollMs : 0)
    var settings = ConnectionSettings(
      servers: config.servers, login: options.login,
      passcode: config.isReceiveOnly ? -1 : (config.passcode ?? -1), watchdogMs: config.watchdogMs,
      outageBackoff: OutageBackoff(
        firstAtMostMs: config.reconnectDelayMs, maximumMs: config.maxReconnectDelayMs),
      refusalBackoff: Backoff(initialMs: config.reconnectDelayMs, maximumMs: config.maxReconnectDelayMs))
    settings.loginTimeoutMs = min(30_000, max(2_000, config.watchdogMs / 2))
    var machine = ConnectionStateMachine(settings: settings, jitter: { Double.random(in: 0..<1) })
    do throws(StoreError) {
      if let line = try watcher.check(force: true) { _ = machine.handle(.filterChanged(line, now: 0)) }
    } catch {
      logger.error("cannot read the registered stations", ["error": error.description])
      try? database.releaseLease(holder: options.holder)
      return 1
    }

    let housekeeperDatabase: Database
    do {
      housekeeperDatabase = try Database(path: config.server.database, options: storeOptions)
    } catch {
      logger.error("cannot open the database", ["error": error.description])
      try? database.releaseLease(holder: options.holder)
      return 1
    }
    let housekeeper = Housekeeper(
      database: housekeeperDatabase, holder: options.holder, leaseTtlMs: config.leaseTtlMs,
      publishIntervalMs: config.publishIntervalMs, login: options.login, counters: counters, shared: shared,
      logger: logger, startedAt: startedAt, stationExpiryMs: config.server.stationExpiryMs,
      checkpointPolicy: config.checkpointPolicy, health: health)
    let connection = ConnectionDriver(
      machine: machine, queue: queue, counters: counters, shared: shared, logger: logger,
      connectTimeoutMs: config.connectTimeoutMs, ackIntervalMs: config.ackIntervalMs, wake: wake,
      onStatusChange: { [housekeeper, wakes] in
        housekeeper.requestPublish()
        wakes.loginChanged()
      })
    // ACK only after the commit is on disk: the writer's connection syncs every commit (docs/design.md "Durability").
    var writerOptions = storeOptions
    writerOptions.synchronous = .full
    let writer = WriterWorker(
      databasePath: config.server.database, storeOptions: writerOptions,
      router: LineRouter(trackOutgoing: config.trackOutgoing), ackIntervalMs: config.ackIntervalMs,
      queue: queue,
      counters: counters, shared: shared, connection: connection, notifier: notifier, logger: logger,
      health: health, databaseChanged: { [self] change in databaseFileChanged(change) })

    logger.info(
      "aprs-listener started",
      [
        "database": config.server.database, "login": options.login,
        "receiveOnly": String(config.isReceiveOnly),
        "servers": config.servers.map(\.description).joined(separator: ","),
        "stations": String(shared.stations.count), "filterBytes": String(machine.status.filterBytes),
        "trackOutgoing": String(config.trackOutgoing), "pid": String(getpid()),
        "threads": ListenerThread.allCases.map(\.rawValue).joined(separator: ","),
      ])
    if config.isReceiveOnly {
      logger.warn(
        "receive-only: no [aprsis] login and passcode; messages are stored and pushed but never ACKed",
        ["login": options.login])
    }

    let beaconStopped = Latch()
    guard let beaconDone = try? startBeacon(opened: database.openedIdentity, stopped: beaconStopped) else {
      return failStart(database, "beacon")
    }
    let housekeeperBox = UncheckedBox(housekeeperDatabase)
    guard
      let housekeeperDone = try? ListenerThread.housekeeper.start({ [self] in
        housekeeper.run(leaseLost: { self.requestStop(status: 1) })
        housekeeperBox.value.close()
      })
    else { return failStart(database, "housekeeper") }
    let watcherBox = UncheckedBox(watcher)
    guard
      let watcherDone = try? ListenerThread.registrations.start({ [connection, wakes] in
        watcherBox.value.run(wake: wakes.registrations, deliver: { connection.submit(filter: $0) })
      })
    else { return failStart(database, "registration watcher") }
    guard
      let writerDone = try? ListenerThread.writer.start({ [self] in
        if !writer.run() { self.requestStop(status: 1) }
      })
    else { return failStart(database, "writer") }
    guard let connectionDone = try? ListenerThread.connection.start({ connection.run() }) else {
      return failStart(database, "connection")
    }
    guard
      let senderDone = try? ListenerThread.sender.start({ [self, writerOptions] in
        runSender(
          storeOptions: writerOptions, connection: connection, shared: shared, housekeeper: housekeeper,
          wakes: wakes)
      })
    else { return failStart(database, "sender") }
    guard
      let deviceAcksDone = try? startDeviceAcks(
        storeOptions: storeOptions, connection: connection, wake: wakes.deviceAcks,
        pollMs: wakes.pollMs(.deviceAcks, withoutSocket: min(250, config.registrationPollMs)))
    else { return failStart(database, "device ACK") }
    var wakeReaderDone: Latch?
    if let wakeSocket {
      guard let done = try? startWakeReader(wakeSocket, wakes: wakes) else {
        return failStart(database, "wake")
      }
      wakeReaderDone = done
    }

    stopRequested.wait(timeoutMs: .max / 4)
    logger.info("stopping: closing the connection and committing what is queued")
    wakes.sends.stop()
    senderDone.wait(timeoutMs: 10_000)
    connection.stop()
    if !connectionDone.wait(timeoutMs: 10_000) {
      logger.warn("the connection thread did not stop within 10 s (a DNS lookup?); going on")
    }
    queue.close()
    if !writerDone.wait(timeoutMs: 60_000) {
      logger.error("the writer did not finish within 60 s", ["queued": String(queue.count)])
    }
    watcherStopped.set()
    wakes.stopAll()
    wakeSocket?.close()
    wakeReaderDone?.wait(timeoutMs: 5_000)
    watcherDone.wait(timeoutMs: 10_000)
    deviceAcksDone.wait(timeoutMs: 10_000)
    housekeeper.stop()
    housekeeperDone.wait(timeoutMs: 15_000)
    rescueChangedFile(database)
    beaconStopped.set()
    health.wake()
    beaconDone.wait(timeoutMs: 5_000)
    let status = exitStatus.load(ordering: .sequentiallyConsistent)
    logger.info(
      "aprs-listener stopped",
      [
        "status": String(status), "linesRead": String(counters.linesRead.load(ordering: .relaxed)),
        "messagesStored": String(counters.messagesStored.load(ordering: .relaxed)),
        "acksSent": String(counters.acksSent.load(ordering: .relaxed)),
      ])
    return status
  }

  /// The sender thread (``OutboundSender``): messages sent through `/v1/send`, on a connection of its own that
  /// syncs every commit (a copy is on disk as transmitted before its line is written), within the transmit budget
  /// (`[send] transmitBudgetPerMinute`; the status says when copies wait for it).
  private func runSender(
    storeOptions: StoreOptions, connection: ConnectionDriver, shared: SharedState, housekeeper: Housekeeper,
    wakes: WorkerSignals
  ) {
    let send = options.config.server.send
    let database: Database
    do {
      database = try Database(path: options.config.server.database, options: storeOptions)
    } catch {
      logger.error("sender: cannot open the database", ["error": error.description])
      return
    }
    defer { database.close() }
    let sender = OutboundSender(
      database: database, scheduler: SendScheduler(offsetsMs: send.scheduleMs, ackWaitMs: send.ackWaitMs),
      pollMs: wakes.pollMs(.sends, withoutSocket: send.pollMs), logger: logger,
      canTransmit: { shared.status.canTransmit },
      transmit: { connection.submit(transmissions: $0) },
      pushesQueued: { [notifier] in notifier?.messagesStored(stations: $0) },
      budget: TransmitBudget(perMinute: send.transmitBudgetPerMinute),
      budgetChanged: { full in
        shared.sendBudgetFull.store(full, ordering: .relaxed)
        housekeeper.requestPublish()
      }, followsClockSteps: true,
      renewalLimits: SendLimits(
        perMinute: send.perMinute, inFlight: send.inFlight,
        perAddressPerMinute: send.sendsPerAddressPerMinute,
        globalPerMinute: send.sendsPerMinuteGlobal))
    sender.run(wake: wakes.sends)
  }

  /// A thread could not be started: give the lease back (through a connection of its own: threads already
  /// started may be using the others) and fail. The process exits right after.
  private func failStart(_ database: Database, _ thread: String) -> Int32 {
    logger.error("cannot start the \(thread) thread")
    requestStop(status: 1)
    if let own = try? Database(path: database.path, options: database.options) {
      try? own.releaseLease(holder: options.holder)
      own.close()
    }
    return 1
  }
}

/// Hands a non-Sendable value to the one thread that uses it from then on.
final class UncheckedBox<Value>: @unchecked Sendable {
  let value: Value
  init(_ value: Value) { self.value = value }
}
