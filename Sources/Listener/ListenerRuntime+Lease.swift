import CompanionFiles
import Logging
import Platform
import Store

#if canImport(Glibc)
  import Glibc
#endif

/// Starting up: the host's lock file first, then the lease (docs/design.md "Crash and restart").
///
/// On one host, liveness comes from the kernel: the lock file ``lockPath(forDatabase:)`` is held (`flock`) for the
/// life of the process, so a listener that gets it knows every earlier one on this host is gone, and takes over a
/// lease such a one left behind at once instead of waiting for it to lapse. A second listener on the same host waits
/// for the lock (logging once) until the first exits, or until it is asked to stop. The time lease still keeps a
/// listener on another host out (`--standby` waits for it to lapse; without it the listener exits).
extension ListenerRuntime {
  /// How often a listener waiting for the lock file tries again (ms).
  static let lockPollMs: Int64 = 50

  /// The lock file of the database at `path`: `<database>.listener-lock` beside it, symbolic links resolved (so
  /// every spelling of one database path shares one lock).
  static func lockPath(forDatabase path: String) -> String {
    DatabaseFile.companionPath(path, suffix: ".listener-lock")
  }

  /// Takes the host's lock file for the database at `path`, waiting while another listener on this host holds
  /// it. Nil when the listener must not run (asked to stop while waiting, or the file cannot be used).
  func acquireHostLock(databasePath path: String) -> FileLock? {
    let lockPath = Self.lockPath(forDatabase: path)
    let lock: FileLock
    do {
      lock = try FileLock(path: lockPath)
    } catch {
      logger.error("cannot open the listener lock file", ["error": error.description])
      return nil
    }
    lock.adoptOwner(of: path)
    var waitingSince: Int64?
    while true {
      do throws(FileLockError) {
        if try lock.lock(note: options.holder) {
          if let waitingSince {
            logger.info(
              "got the listener lock: the other listener on this host is gone",
              ["lock": lockPath, "waitedMs": String(monotonicMilliseconds() - waitingSince)])
          }
          return lock
        }
      } catch {
        logger.error("cannot lock the listener lock file", ["error": error.description])
        lock.close()
        return nil
      }
      if waitingSince == nil {
        waitingSince = monotonicMilliseconds()
        logger.info(
          "another aprs-listener on this host is running on this database (it holds the lock file); "
            + "waiting for it to exit",
          ["lock": lockPath, "holder": lock.contents()])
      }
      if stopRequested.wait(timeoutMs: Self.lockPollMs) {
        lock.close()
        return nil
      }
    }
  }

  /// Takes the lease (holding the host's lock): free, expired, or left by a dead listener of this host: at once;
  /// held by another host: waits with `--standby`, else false. False too when asked to stop while waiting.
  func acquireLease(_ database: Database) -> Bool {
    let ttl = options.config.leaseTtlMs
    let host = String(LeaseHolder.host(of: options.holder))
    var announced = false
    while true {
      do throws(StoreError) {
        if try database.acquireLease(holder: options.holder, now: epochMilliseconds(), ttlMs: ttl) {
          return true
        }
        let lease = try database.lease()
        let remaining = max(0, (lease?.expiresAt ?? 0) - epochMilliseconds())
        switch LeaseContest.decide(lease: lease, host: host, standby: options.standby) {
        case .retry:
          continue
        case .takeOver(let stale):
          if try database.takeOverLease(
            from: stale, holder: options.holder, now: epochMilliseconds(), ttlMs: ttl)
          {
            logger.info(
              "took over the lease of a listener on this host that is gone",
              ["previousHolder": stale, "leaseExpiresInSeconds": String((remaining + 999) / 1000)])
            return true
          }
          continue  // it changed meanwhile: look again
        case .refuse(let holder):
          logger.error(
            "another aprs-listener is running on this database (on another host, it holds the listener lease); "
              + "exiting. Run with --standby to wait and take over when it stops.",
            [
              "database": options.config.server.database, "holder": holder,
              "leaseExpiresInSeconds": String((remaining + 999) / 1000),
            ])
          return false
        case .wait(let holder):
          if !announced {
            logger.info(
              "standby: another listener holds the lease; waiting to take over",
              ["holder": holder, "leaseExpiresInSeconds": String((remaining + 999) / 1000)])
            announced = true
          }
        }
      } catch {
        logger.warn("cannot read the listener lease; retrying", ["error": error.description])
      }
      if stopRequested.wait(timeoutMs: max(100, min(1000, ttl / 3))) { return false }
    }
  }
}
