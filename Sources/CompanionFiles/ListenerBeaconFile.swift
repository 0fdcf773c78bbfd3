import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// The file that carries ``ListenerBeacon`` records: `<database>.listener-beacon` beside the database (its real
/// path, as the listener's lock file), ``size`` bytes, pre-allocated once and then overwritten in place.
/// Not `Sendable`: one thread writes it.
public final class ListenerBeaconFile {
  /// The file's fixed size, bytes (one page).
  public static let size = 4096

  /// The beacon file of the database at `databasePath`.
  public static func path(forDatabase databasePath: String) -> String {
    DatabaseFile.companionPath(databasePath, suffix: ".listener-beacon")
  }

  /// The file's path.
  public let path: String
  private var descriptor: Int32
  private var sequence: UInt64 = 0

  /// Creates (mode 0666 less the umask, as the database) or opens the file and allocates its ``size`` bytes on
  /// disk (written and synced), so that later writes need no free space; run as root, it gets the owner of the
  /// database at `databasePath`. Throws the `errno` when that fails (the disk is full already: the listener goes
  /// on without a beacon).
  public init(path: String, ownerOf databasePath: String? = nil) throws(FileLockError) {
    self.path = path
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o666)
    guard fd >= 0 else { throw FileLockError(path: path, operation: "open", errno: errno) }
    descriptor = fd
    if let databasePath { DatabaseFile.adoptOwner(fd, of: databasePath) }
    let blank = [UInt8](repeating: 0x20, count: Self.size)
    let written = blank.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    guard written == Self.size, fsync(fd) == 0 else {
      let failure = written < 0 ? errno : ENOSPC
      close()
      throw FileLockError(path: path, operation: "allocate", errno: failure)
    }
  }

  deinit { close() }

  /// Overwrites the record in place (one `pwrite` of the whole page; no sync: readers read the page cache).
  /// False when the write failed.
  @discardableResult
  public func write(_ beacon: ListenerBeacon) -> Bool {
    guard descriptor >= 0 else { return false }
    sequence &+= 1
    var page = beacon.encoded(sequence: sequence)
    page = Array(page.prefix(Self.size))
    page.append(contentsOf: repeatElement(0x20, count: Self.size - page.count))
    return page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) } == Self.size
  }

  /// Closes the file (the record stays; it ages out). Safe to call twice.
  public func close() {
    if descriptor >= 0 { _ = Glibc.close(descriptor) }
    descriptor = -1
  }

  /// The record in the file at `path`, nil when there is none or it cannot be read (a record caught half
  /// rewritten is read again, a few times).
  public static func read(path: String) -> ListenerBeacon? {
    let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
    guard fd >= 0 else { return nil }
    defer { _ = Glibc.close(fd) }
    var page = [UInt8](repeating: 0, count: size)
    for _ in 0..<5 {
      let count = page.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
      guard count > 0 else { return nil }
      if let beacon = ListenerBeacon(encoded: page[0..<count]) { return beacon }
    }
    return nil
  }
}
