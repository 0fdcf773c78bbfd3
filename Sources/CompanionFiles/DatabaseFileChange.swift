#if canImport(Glibc)
  import Glibc
#endif

/// What happened to a database file under a process that has it open: deleted (`rm`: its path is gone, or its link
/// count is 0), or replaced (`mv` of another file over it, a restore without stopping first: the path now names
/// another file, by device and inode or as SQLite's `SQLITE_FCNTL_HAS_MOVED` says). Either way the open
/// connection reads and writes a file nobody will open again: whatever it commits is lost at the next restart,
/// and its write-ahead log (which SQLite finds by the path) must not be applied onto the new file
/// (docs/design.md "Faults").
public enum DatabaseFileChange: Sendable, Equatable, CustomStringConvertible {
  /// The path no longer names any file (or the open file has no links left).
  case deleted
  /// The path names another file than the one open.
  case replaced

  /// The identity of a file: its device and inode, and how many names it has.
  public struct Identity: Sendable, Equatable {
    public var device: UInt64
    public var inode: UInt64
    public var links: UInt64

    public init(device: UInt64, inode: UInt64, links: UInt64) {
      self.device = device
      self.inode = inode
      self.links = links
    }

    /// The identity of the file `path` names (following links), nil when there is none.
    public static func of(path: String) -> Identity? {
      var info = stat()
      guard stat(path, &info) == 0 else { return nil }
      return Identity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), links: UInt64(info.st_nlink))
    }
  }

  /// The pure check: `opened` is the identity the file had when the connection opened it, `current` what the
  /// path names now (nil: nothing), `sqliteSaysMoved` SQLite's own answer (`SQLITE_FCNTL_HAS_MOVED`, which also
  /// sees a link count of 0). Nil when the file is still the one open.
  public static func classify(opened: Identity, current: Identity?, sqliteSaysMoved: Bool)
    -> DatabaseFileChange?
  {
    guard let current, current.links > 0 else { return .deleted }
    if current.device != opened.device || current.inode != opened.inode { return .replaced }
    return sqliteSaysMoved ? .replaced : nil
  }

  /// `the database file was deleted` / `the database file was replaced by another file`.
  public var description: String {
    switch self {
    case .deleted: "the database file was deleted"
    case .replaced: "the database file was replaced by another file"
    }
  }
}
