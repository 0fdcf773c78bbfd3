import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The responder's own request counters and latency histograms, kept in memory and shared by its
/// worker threads (one lock, held for a few additions per request). The shell records every
/// request it answers; `GET /metrics` renders them next to what the database says.
///
/// They live as long as the process: a restarted responder starts from zero (Prometheus takes a
/// counter that goes back to zero as a restart), and in CGI mode, where every request is its own
/// process, they only ever hold that one request: scrape a FastCGI responder.
public final class RequestMetrics: Sendable {
  /// The upper bounds of the latency histogram's buckets, in seconds as written in `le`, and in
  /// microseconds for counting.
  public static let buckets: [(label: String, microseconds: Int64)] = [
    ("0.0005", 500), ("0.001", 1_000), ("0.0025", 2_500), ("0.005", 5_000), ("0.01", 10_000),
    ("0.025", 25_000), ("0.05", 50_000), ("0.1", 100_000), ("0.25", 250_000), ("0.5", 500_000),
    ("1", 1_000_000), ("2.5", 2_500_000), ("5", 5_000_000),
  ]

  /// The `endpoint` label of a request path: the endpoint's path when it is one of the API's, else
  /// `other` (so unknown paths cannot grow the label set without bound).
  public static func endpointLabel(_ path: String) -> String {
    APIHandler.Endpoint(rawValue: path)?.rawValue ?? "other"
  }

  /// Every `endpoint` label, in the order `/metrics` lists them.
  static let endpointLabels = APIHandler.Endpoint.allCases.map(\.rawValue) + ["other"]

  /// The position of `path`'s label in `endpointLabels`.
  static func endpointIndex(_ path: String) -> Int {
    guard let endpoint = APIHandler.Endpoint(rawValue: path) else { return endpointLabels.count - 1 }
    return APIHandler.Endpoint.allCases.firstIndex(of: endpoint) ?? endpointLabels.count - 1
  }

  /// One endpoint's latency histogram (bucket counts not yet cumulative).
  struct Histogram: Sendable {
    var buckets = [Int](repeating: 0, count: RequestMetrics.buckets.count)
    var count = 0
    var sumMicroseconds: Int64 = 0
  }

  /// The counters, by position in `endpointLabels` (no label hashing per request).
  struct Counts: Sendable {
    /// Requests by endpoint and status.
    var requests = [[Int: Int]](repeating: [:], count: RequestMetrics.endpointLabels.count)
    var latency = [Histogram](repeating: Histogram(), count: RequestMetrics.endpointLabels.count)
  }

  /// A copy of the counters at one moment.
  struct Snapshot: Sendable {
    var requests: [String: [Int: Int]]
    var latency: [String: Histogram]
    var inFlight: Int
  }

  /// The counters, in shards picked by thread, so workers recording at once rarely meet on one
  /// lock (a contended lock costs a sleep and a wake on a small machine); `/metrics` adds them up.
  private let shards = (0..<8).map { _ in Shard() }

  private final class Shard: Sendable {
    let counts = Mutex(Counts())
  }
  private let inFlight = Atomic<Int>(0)
  /// Reads how many long polls are held (the transport knows); nil: none ever are.
  private let parkedSource = Mutex<(@Sendable () -> Int)?>(nil)
  private let wakeSource = Mutex<(@Sendable () -> (sent: Int, failed: Int))?>(nil)
  /// Hits of each long-poll cap, by position in `ParkLimit.allCases`, and when to log them.
  private let limitHits = Mutex(
    [(total: Int, report: HitReport)](repeating: (0, HitReport()), count: ParkLimit.allCases.count))
  /// When this process started, epoch ms.
  public let startedAt: Int64
  /// `fastcgi` or `cgi`, shown in `aprs_cloud_responder_info`.
  public let mode: String
  /// Worker threads (1 in CGI mode).
  public let workers: Int

  public init(startedAt: Int64, mode: String = "fastcgi", workers: Int = 1) {
    self.startedAt = startedAt
    self.mode = mode
    self.workers = workers
  }

  /// A request has started (the in-flight gauge).
  public func begin() {
    inFlight.add(1, ordering: .relaxed)
  }

  /// A request that `begin()` counted is no longer being worked on, and not answered yet (it is
  /// held as a long poll): only the in-flight gauge goes down.
  public func end() {
    inFlight.subtract(1, ordering: .relaxed)
  }

  /// Where the parked-requests gauge comes from (the FastCGI server's count).
  public func countParked(with source: @escaping @Sendable () -> Int) {
    parkedSource.withLock { $0 = source }
  }

  /// Long polls held right now.
  func parked() -> Int {
    parkedSource.withLock { $0 }?() ?? 0
  }

  /// Where the listener wake counts come from (`CompanionFiles.WakeSocket.Sender`: datagrams sent, and those that could
  /// not be, as when no listener runs); nil: none are sent (the metric is left out).
  public func countListenerWakes(with source: @escaping @Sendable () -> (sent: Int, failed: Int)) {
    wakeSource.withLock { $0 = source }
  }

  /// The listener wakes sent and failed so far, nil when this process sends none.
  func listenerWakes() -> (sent: Int, failed: Int)? {
    wakeSource.withLock { $0 }?()
  }

  /// A long poll hit `limit` at `now` (monotonic ms). Returns the hits to log in one info line
  /// when one is due (`HitReport`: the first, then at most one a minute), else nil.
  public func countLimitHit(_ limit: ParkLimit, now: Int64) -> Int? {
    let index = ParkLimit.allCases.firstIndex(of: limit)!
    return limitHits.withLock { hits in
      hits[index].total += 1
      return hits[index].report.hit(now: now)
    }
  }

  /// The hits of `limit` since this process started.
  public func limitHits(_ limit: ParkLimit) -> Int {
    let index = ParkLimit.allCases.firstIndex(of: limit)!
    return limitHits.withLock { $0[index].total }
  }

  /// A request for `path` was answered with `status` after `microseconds`; pass
  /// `finishing: true` when `begin()` was called for it.
  public func record(path: String, status: Int, microseconds: Int64, finishing: Bool = true) {
    let endpoint = Self.endpointIndex(path)
    let elapsed = max(0, microseconds)
    let bucket = Self.buckets.firstIndex { elapsed <= $0.microseconds }
    if finishing { inFlight.subtract(1, ordering: .relaxed) }
    let thread = UInt64(UInt(bitPattern: Int(bitPattern: UInt(pthread_self()))))
    shards[Int((thread &* 0x9E37_79B9_7F4A_7C15) >> 61)].counts.withLock { counts in
      counts.requests[endpoint][status, default: 0] += 1
      if let bucket { counts.latency[endpoint].buckets[bucket] += 1 }
      counts.latency[endpoint].count += 1
      counts.latency[endpoint].sumMicroseconds += elapsed
    }
  }

  /// The counters as they are now.
  func snapshot() -> Snapshot {
    var total = Counts()
    for shard in shards {
      let copy = shard.counts.withLock { $0 }
      for index in Self.endpointLabels.indices {
        total.requests[index].merge(copy.requests[index], uniquingKeysWith: +)
        for bucket in copy.latency[index].buckets.indices {
          total.latency[index].buckets[bucket] += copy.latency[index].buckets[bucket]
        }
        total.latency[index].count += copy.latency[index].count
        total.latency[index].sumMicroseconds += copy.latency[index].sumMicroseconds
      }
    }
    var requests: [String: [Int: Int]] = [:]
    var latency: [String: Histogram] = [:]
    for (index, label) in Self.endpointLabels.enumerated() {
      if !total.requests[index].isEmpty { requests[label] = total.requests[index] }
      if total.latency[index].count > 0 { latency[label] = total.latency[index] }
    }
    return Snapshot(requests: requests, latency: latency, inFlight: max(0, inFlight.load(ordering: .relaxed)))
  }
}
