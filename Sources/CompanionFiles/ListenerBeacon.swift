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
