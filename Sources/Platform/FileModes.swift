#if canImport(Glibc)
  import Glibc
#endif

/// The permissions of what the executables create: the database with its `-wal` and `-shm` files,
/// backups, rendered configurations and logs. The database holds push tokens, so none of it may
/// depend on the caller's umask (Debian's 022 would make it world-readable).
///
/// Every executable (`aprs-cloud-fcgi`, `aprs-listener`, `aprs-cloud`) calls `applyUmask(forFilesIn:)`
/// at start, with the folder it writes into. The folder's own mode says who shares it:
/// - set-group-id and group-writable (the VPS guide's `2770` database folder, shared by the two
///   service users through their group): umask `007`, files `0660`;
/// - set-group-id, not group-writable (its `2750` backup folder: the group reads): umask `027`,
///   files `0640`;
/// - anything else, or a folder that does not exist yet: umask `077`, files `0600`.
///
/// SQLite gives a new `-wal` or `-shm` file the database file's mode, so these follow the database.
public enum FileModes {
  /// Owner only: files `0600`, folders `0700`.
  public static let privateMask: mode_t = 0o077
  /// Owner and group: files `0660`, folders `0770`.
  public static let sharedMask: mode_t = 0o007
  /// Owner, and the group reading: files `0640`, folders `0750`.
  public static let groupReadMask: mode_t = 0o027

  /// The umask for files created in a folder whose `st_mode` is `folderMode` (nil: no such folder).
  public static func mask(folderMode: mode_t?) -> mode_t {
    guard let folderMode, folderMode & S_IFMT == S_IFDIR, folderMode & S_ISGID != 0 else {
      return privateMask
    }
    return folderMode & S_IWGRP != 0 ? sharedMask : groupReadMask
  }

  /// Sets the process's umask for files created in `folder` (see the type's rules) and returns it.
  /// Call it before any thread starts: the umask belongs to the whole process.
  @discardableResult
  public static func applyUmask(forFilesIn folder: String) -> mode_t {
    var info = stat()
    let mask = mask(folderMode: stat(folder, &info) == 0 ? info.st_mode : nil)
    umask(mask)
    return mask
  }

  /// The folder that holds `path`: `.` for a bare name, `/` for an entry of the root.
  public static func folder(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return slash == path.startIndex ? "/" : String(path[..<slash])
  }
}
