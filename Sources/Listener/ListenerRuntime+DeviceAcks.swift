import Platform
import Store

extension ListenerRuntime {
  /// Starts the ``DeviceAckWorker`` thread on a database connection of its own; it runs until `wake` is stopped,
  /// and looks every `pollMs` and whenever `wake` is signalled. The ACKs it takes go to `connection` (kept there
  /// until a verified login can write them).
  func startDeviceAcks(
    storeOptions: StoreOptions, connection: ConnectionDriver, wake: WakeSignal, pollMs: Int64
  ) throws -> Latch {
    let config = options.config
    let database = try Database(path: config.server.database, options: storeOptions)
    let worker = DeviceAckWorker(
      database: database, pollMs: pollMs, ackIntervalMs: config.ackIntervalMs,
      counters: counters, logger: logger, ackClock: steadyEpochMilliseconds)
    let box = UncheckedBox(worker)
    let health = health
    return try ListenerThread.deviceAcks.start({
      box.value.run(
        wake: wake, canTransmit: { connection.acceptsAcks && !health.databaseFileChanged },
        deliver: { acks in
          // Nothing is ACKed once the database file was deleted or replaced.
          if !health.databaseFileChanged { connection.submit(acks: acks) }
        })
      box.value.database.close()
    })
  }
}
