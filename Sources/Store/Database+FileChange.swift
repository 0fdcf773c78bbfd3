import CSQLite
import CompanionFiles

extension Database {
  /// Whether the file this connection has open is still the one its path names (``DatabaseFileChange``): nil when
  /// it is. Two system calls (a `stat` of the path and SQLite's own check), cheap enough for every batch or request;
  /// call it on the connection's own thread. Special paths (`:memory:`, URIs) never change.
  public func fileChange() -> DatabaseFileChange? {
    guard let opened = openedIdentity else { return nil }
    var moved: Int32 = 0
    if let connection = unsafe connectionForChecks {
      _ = unsafe sqlite3_file_control(connection, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
    }
    return DatabaseFileChange.classify(
      opened: opened, current: DatabaseFileChange.Identity.of(path: path), sqliteSaysMoved: moved != 0)
  }

  /// What to do, once, on a connection whose file was deleted or replaced (``fileChange()``), before the process
  /// exits without closing it: copy what the open file holds to `rescuePath` when given (SQLite's online backup;
  /// the messages stored since the change would otherwise be lost with the file), then checkpoint its write-ahead
  /// log into the open file and truncate the log, so the `-wal` that SQLite finds by the path holds nothing the new
  /// file could be mixed with. Best effort: returns what was done, for the log.
  public func abandonChangedFile(rescuePath: String?) -> [String: String] {
    var fields: [String: String] = [:]
    if let rescuePath {
      do throws(StoreError) {
        try backup(to: rescuePath)
        fields["rescued"] = rescuePath
      } catch {
        fields["rescueError"] = error.description
      }
    }
    do throws(StoreError) {
      let result = try checkpoint(mode: .truncate)
      fields["walEmptied"] = result.busy ? "no (busy)" : "yes"
    } catch {
      fields["walEmptied"] = "no (\(error.description))"
    }
    return fields
  }
}
