import Platform

#if canImport(Glibc)
  import Glibc
#endif

/// What a running listener says about itself through a channel that needs neither disk space nor the database's
/// write lock (docs/design.md "Faults"): the `listener.*` status record lives in the database and cannot be written
/// while the disk is full or another process holds the lock, which is exactly when `/health` must name the cause.
///
/// The listener writes this record every 10 s (and at once when storing starts or stops failing) into
/// ``ListenerBeaconFile``, a file of exactly ``ListenerBeaconFile/size`` bytes beside the database that it
/// pre-allocates (written and synced once at start) and then only overwrites in place with one `pwrite`: an
/// overwrite of allocated blocks needs no free space, takes no lock, and works on any local file system, tmpfs
/// included. The responder reads it for `/health` and `/metrics`.
///
/// Freshness is on the host's monotonic clock (`CLOCK_MONOTONIC` is one clock for every process of a host, and a
/// wall-clock step does not age the record): a record written within ``freshMs`` says that the listener process
/// is alive, whatever its lease says.
public struct ListenerBeacon: Sendable, Equatable {
  /// A record older than this (ms, on the monotonic clock) no longer says the listener is alive. It writes one
  /// every 10 s (`ListenerRuntime.beaconIntervalMs`, slow so that an idle listener sleeps) and at once on any
  /// change of its health: three intervals, so one late write under load is not taken for a dead listener.
  public static let freshMs: Int64 = 30_000

  /// The listener's host (`gethostname`): its monotonic clock means nothing on another host, so a reader elsewhere
  /// (two hosts sharing the data directory) ignores the record.
  public var host: String
  /// The listener's process id.
  public var pid: Int32
  /// When the record was written: the host's monotonic clock (ms) and the wall clock (epoch ms).
  public var monotonicMs: Int64
  public var epochMs: Int64
  /// Why the last batch could not be stored (a ``StorageFault`` description or the store's error), nil while
  /// storing works.
  public var storeFault: String?
  /// Since when batches fail (epoch ms), nil while storing works.
  public var storeFaultSince: Int64?
  /// Batch attempts that failed since the listener started.
  public var failedBatches: Int
  /// Lines read and kept for storing, not stored yet (the batch being retried and the ones waiting behind it).
  public var heldLines: Int
  /// Lines dropped, oldest first, because the queue was full while storing failed (since start).
  public var droppedLines: Int
  /// Why the lease cannot be renewed, nil while it can.
  public var leaseFault: String?
  /// What happened to the database file under the listener (``DatabaseFileChange``), nil while it is the one
  /// the path names.
  public var databaseFile: String?

  public init(
    host: String = ListenerBeacon.thisHost, pid: Int32, monotonicMs: Int64, epochMs: Int64,
    storeFault: String? = nil, storeFaultSince: Int64? = nil,
    failedBatches: Int = 0, heldLines: Int = 0, droppedLines: Int = 0, leaseFault: String? = nil,
    databaseFile: String? = nil
  ) {
    self.host = host
    self.pid = pid
    self.monotonicMs = monotonicMs
    self.epochMs = epochMs
    self.storeFault = storeFault
    self.storeFaultSince = storeFaultSince
    self.failedBatches = failedBatches
    self.heldLines = heldLines
    self.droppedLines = droppedLines
    self.leaseFault = leaseFault
    self.databaseFile = databaseFile
  }

  /// Whether the record was written on this host within ``freshMs`` before `monotonicNow`.
  public func isFresh(monotonicNow: Int64) -> Bool {
    host == Self.thisHost && monotonicNow - monotonicMs <= Self.freshMs && monotonicMs <= monotonicNow + 1_000
  }

  /// This host's name (`gethostname`), `localhost` when it has none.
  public static let thisHost: String = {
    var name = [CChar](repeating: 0, count: 256)
    gethostname(&name, name.count - 1)
    let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return host.isEmpty ? "localhost" : host
  }()

  // MARK: Encoding

  static let magic = "aprs-listener-beacon 1"

  /// `magic`, then `key=value` lines, between `seq=N` and `end=N` (a reader that sees them differ read a record
  /// being rewritten and reads again). Texts lose line breaks and are cut to 300 bytes.
  func encoded(sequence: UInt64) -> [UInt8] {
    func clean(_ text: String?) -> String {
      guard let text else { return "" }
      let flat = String(text.map { $0 == "\n" || $0 == "\r" ? " " : $0 })
      return String(decoding: Array(flat.utf8.prefix(300)), as: UTF8.self)
    }
    let lines = [
      Self.magic, "seq=\(sequence)", "host=\(clean(host))", "pid=\(pid)", "monotonicMs=\(monotonicMs)",
      "epochMs=\(epochMs)",
      "storeFault=\(clean(storeFault))", "storeFaultSince=\(storeFaultSince.map { String($0) } ?? "")",
      "failedBatches=\(failedBatches)", "heldLines=\(heldLines)", "droppedLines=\(droppedLines)",
      "leaseFault=\(clean(leaseFault))", "databaseFile=\(clean(databaseFile))", "end=\(sequence)",
    ]
    return Array((lines.joined(separator: "\n") + "\n").utf8)
  }

  /// Decodes a record; nil when it is not one (empty, garbled, or caught half rewritten).
  init?(encoded bytes: some Collection<UInt8>) {
    let whole = String(decoding: bytes, as: UTF8.self)
    var rows: [Substring: Substring] = [:]
    var first = true
    for line in whole.split(separator: "\n", omittingEmptySubsequences: false) {
      if first {
        guard line == Self.magic else { return nil }
        first = false
        continue
      }
      guard let equals = line.firstIndex(of: "=") else { continue }
      rows[line[..<equals]] = line[line.index(after: equals)...]
    }
    guard let sequence = rows["seq"], !sequence.isEmpty, rows["end"] == sequence,
      let pid = rows["pid"].flatMap({ Int32($0) }),
      let monotonic = rows["monotonicMs"].flatMap({ Int64($0) }),
      let epoch = rows["epochMs"].flatMap({ Int64($0) })
    else { return nil }
    func text(_ key: Substring) -> String? { rows[key].flatMap { $0.isEmpty ? nil : String($0) } }
    func count(_ key: Substring) -> Int { rows[key].flatMap { Int($0) } ?? 0 }
    self.init(
      host: rows["host"].map(String.init) ?? "", pid: pid, monotonicMs: monotonic, epochMs: epoch,
      storeFault: text("storeFault"),
      storeFaultSince: rows["storeFaultSince"].flatMap { Int64($0) }, failedBatches: count("failedBatches"),
      heldLines: count("heldLines"), droppedLines: count("droppedLines"), leaseFault: text("leaseFault"),
      databaseFile: text("databaseFile"))
  }
}

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
