import FastCGI
import Logging
import Store

/// What wakes parked long polls: the database, the one state the listener and the responder share.
///
/// The FastCGI server's keeper thread asks every 10 ms while anything is parked. The answer costs
/// one `PRAGMA data_version` when nothing was committed since the last look (the listener's commits,
/// and the workers' own, change it). After a commit, one read lists the stations that got messages
/// after the newest timestamp seen so far (`messageActivity(after:)`: only the new rows, through the
/// timestamp index), each with its newest timestamp; a parked sync whose `since` is below that is
/// answered. A request that parked on a read older than the last look (`recheckFrom`) has the
/// messages since its own read looked at again, so none slips between its read and its parking.
///
/// It owns its own connection, used on the keeper thread only.
final class SyncWakeSource: WakeSource {
  private let database: Database
  private let logger: Logger
  /// The newest message timestamp the last look saw.
  private var newest: Int64
  private var dataVersion: Int64?

  /// Opens on `database` (its own connection) and reads where the messages stand now.
  init(database: Database, logger: Logger) throws(StoreError) {
    self.database = database
    self.logger = logger
    newest = try database.messageActivity(after: .max).newestTimestamp
  }

  func changes(recheckFrom: Int64?) -> [String: Int64] {
    do throws(StoreError) {
      let version = try database.dataVersion()
      let from = min(newest, recheckFrom ?? newest)
      guard version != dataVersion || from < newest else { return [:] }
      dataVersion = version
      let activity = try database.messageActivity(after: from)
      newest = max(newest, activity.newestTimestamp)
      return activity.stations
    } catch {
      logger.error("cannot read what woke long polls", ["error": error.description])
      return [:]
    }
  }

  func close() { database.close() }
}
