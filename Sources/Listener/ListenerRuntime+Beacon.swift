import CompanionFiles
import Logging
import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// The beacon and the file watch (docs/design.md "Faults"): one thread that, every ``beaconIntervalMs`` and at once on
/// any change of ``ListenerHealth``, writes the ``ListenerBeacon`` (`/health` reads it without the database, so it
/// names a full disk or a held lock while the status record in the database cannot be written); and one that
/// sleeps on the database file's path (``Platform/PathWatch``: inotify, at once when the file is deleted or replaced,
/// and every ``fileWatchFallbackMs`` anyway) and checks that the file is still the one the listener opened
/// (``CompanionFiles/DatabaseFileChange``; the writer checks it after every commit too).
extension ListenerRuntime {
  /// How often the beacon is written (ms): well inside ``CompanionFiles/ListenerBeacon/freshMs``, the age past which
  /// `/health` no longer takes it for a live listener.
  static let beaconIntervalMs: Int64 = 10_000
  /// How often the database file is checked without an inotify event (ms).
  static let fileWatchFallbackMs: Int64 = 30_000

  /// Starts the beacon thread; it runs until `stopped` is set, then writes a last record that says the listener
  /// stopped. `opened`: the database file's identity when the listener opened it.
  func startBeacon(opened: DatabaseFileChange.Identity?, stopped: Latch) throws -> Latch {
    let path = options.config.server.database
    let beaconPath = ListenerBeaconFile.path(forDatabase: path)
    let file: ListenerBeaconFile?
    do {
      file = try ListenerBeaconFile(path: beaconPath, ownerOf: path)
    } catch {
      logger.warn(
        "cannot create the beacon file: /health cannot name storage faults while the disk is full",
        ["error": error.description])
      file = nil
    }
    let box = UncheckedBox(file)
    let watch = PathWatch(path: path)
    let watchDone = try ListenerThread.fileWatch.start({ [self] in
      guard let opened else { return }
      repeat {
        if let change = DatabaseFileChange.classify(
          opened: opened, current: DatabaseFileChange.Identity.of(path: path), sqliteSaysMoved: false)
        {
          if health.databaseFile(change) { databaseFileChanged(change) }
          return
        }
      } while watch.wait(timeoutMs: Self.fileWatchFallbackMs) != .cancelled
    })
    return try ListenerThread.beacon.start({ [self] in
      while !stopped.value {
        box.value?.write(beacon())
        health.wait(untilMs: monotonicMilliseconds() + Self.beaconIntervalMs)
      }
      watch.cancel()
      watchDone.wait(timeoutMs: 5_000)
      var last = beacon()
      last.monotonicMs = 0
      box.value?.write(last)
      box.value?.close()
    })
  }

  /// The beacon as of now.
  func beacon() -> ListenerBeacon {
    let state = health.snapshot
    let now = monotonicMilliseconds()
    let fault = ListenerHealth.storeFault(state, monotonicNow: now)
    let stalledSince = state.attemptStartedAt.map { epochMilliseconds() - (now - $0) }
    return ListenerBeacon(
      pid: getpid(), monotonicMs: now, epochMs: epochMilliseconds(),
      storeFault: fault, storeFaultSince: state.storeFaultSince ?? (fault == nil ? nil : stalledSince),
      failedBatches: counters.storeErrors.load(ordering: .relaxed), heldLines: state.heldLines,
      droppedLines: state.droppedLines, leaseFault: state.leaseFault,
      databaseFile: state.databaseChange?.description)
  }

  /// The database file was deleted or replaced (reported once): nothing is ACKed from now on (``ListenerHealth``),
  /// the listener stops and exits 1, so its supervisor starts it again on the file the path names
  /// (``rescueChangedFile(_:)`` runs on the way out).
  func databaseFileChanged(_ change: DatabaseFileChange) {
    logger.error(
      "\(change.description) under the running listener; no more ACKs, stopping so that the service restarts on"
        + " the file the path names",
      ["database": options.config.server.database])
    requestStop(status: 1)
  }

  /// On the way out after the file changed: copies what the open (deleted or replaced) file holds beside the
  /// path, `<database>.rescued-<epoch ms>` (the messages stored and ACKed in it would otherwise be gone), and
  /// when the path names no file at all (it was deleted), puts the copy there, so the restart finds every
  /// registration and message. A replaced file is left as it is (whoever replaced it meant it); the copy of the
  /// old one stays beside it for the operator.
  func rescueChangedFile(_ database: Database) {
    guard let change = health.snapshot.databaseChange else { return }
    let path = options.config.server.database
    let rescue = "\(path).rescued-\(epochMilliseconds())"
    do throws(StoreError) {
      try database.backup(to: rescue)
    } catch {
      logger.error(
        "cannot copy the \(change == .deleted ? "deleted" : "replaced") database file; what it held is lost",
        ["database": path, "error": error.description])
      return
    }
    if change == .deleted, link(rescue, path) == 0 {
      unlink(rescue)
      logger.error(
        "the deleted database file was copied back into place; the restart goes on with everything it held",
        ["database": path])
    } else {
      logger.error(
        "what the old database file held is kept beside it", ["database": path, "copy": rescue])
    }
  }
}
