import CompanionFiles
import Platform
import Store

/// What wakes held long polls: the database, the one state the listener and the responder share.
///
/// The responder's FastCGI server asks (its keeper thread, while anything is held: `changes(recheckFrom:)` is
/// its `WakeSource`): when a writer's commit woke it through the long-poll wake socket, or every 10 ms where the
/// socket could not be bound. The answer costs
/// one `PRAGMA data_version` when nothing was committed since the last look (the listener's commits,
/// and the workers' own, change it). After a commit, one read lists the stations that got messages
/// after the newest timestamp seen so far (`messageActivity(after:)`: only the new rows, through the
/// timestamp index), each with its newest timestamp; a parked sync whose `since` is below that is
/// answered. A request that parked on a read older than the last look (`recheckFrom`) has the
/// messages since its own read looked at again, so none slips between its read and its parking.
///
/// It owns its own connection, to be used on one thread only.
public final class SyncWatch {
  private let database: Database
  /// Told when the database cannot be read (at most once a minute).
  private let complain: (String) -> Void
  /// The newest message timestamp the last look saw.
  private var newest: Int64
  private var dataVersion: Int64?
  /// Monotonic ms of the last complaint, so a broken database is logged once a minute, not every 10 ms.
  private var lastComplaint: Int64 = -60_000

  /// The long-poll wake socket it sleeps on (``CompanionFiles/WakeSocket/Role/longPolls``), nil: it is asked every
  /// 10 ms.
  public let wakeSocket: WakeSocket?

  /// Watches through `database` (a connection of its own) from where the messages stand now; with `wakeSocket`,
  /// only when a writer's commit woke it (and every ``CompanionFiles/WakeSocket/Role/fallbackPollMs``).
  public init(
    database: Database, wakeSocket: WakeSocket? = nil, complain: @escaping (String) -> Void = { _ in }
  ) throws(StoreError) {
    self.database = database
    self.wakeSocket = wakeSocket
    self.complain = complain
    newest = try database.messageActivity(after: .max).newestTimestamp
  }

  /// The stations that got messages since the last call, each with its newest message timestamp;
  /// and, with `recheckFrom` (a timestamp older than what was looked at), those after it too.
  /// Empty when nothing was committed and nothing is to be looked at again.
  public func changes(recheckFrom: Int64?) -> [String: Int64] {
    do throws(StoreError) {
      let version = try database.dataVersion()
      let from = min(newest, recheckFrom ?? newest)
      guard version != dataVersion || from < newest else { return [:] }
      dataVersion = version
      let activity = try database.messageActivity(after: from)
      newest = max(newest, activity.newestTimestamp)
      return activity.stations
    } catch {
      let now = monotonicMilliseconds()
      if now - lastComplaint >= 60_000 {
        lastComplaint = now
        complain(error.description)
      }
      return [:]
    }
  }

  /// The wake socket's descriptor, nil without one.
  public var wakeDescriptor: Int32? { wakeSocket?.descriptor }

  /// Reads the queued wakes.
  public func drainWakes() { _ = wakeSocket?.drain() }

  /// How often to look anyway while the wake socket is bound, ms.
  public var fallbackPollMs: Int64 { WakeSocket.Role.longPolls.fallbackPollMs }

  /// Closes the connection (and removes the wake socket's file).
  public func close() {
    wakeSocket?.close()
    database.close()
  }
}
