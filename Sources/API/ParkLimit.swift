/// The `[server]` caps on held long polls (`/v1/sync` with `wait`), named exactly as their config
/// keys: their `limit` label in `aprs_cloud_limit_hits_total` and `aprs_cloud_limit_setting`. The
/// FastCGI shell enforces them (it holds the requests); their hits are counted in memory by each
/// responder process (`RequestMetrics.countLimitHit`), unlike the `[ratelimit]` and `[limits]` ones
/// (`LimitName`), which the database counts.
public enum ParkLimit: String, Sendable, CaseIterable {
  /// `[server] maxParked`: long polls held at once in all; past it a `wait` is answered at once
  /// (`messages:[]`).
  case maxParked
  /// `[server] maxParkedPerStation`: long polls held at once per station; one more is held and the
  /// station's oldest is answered (`messages:[]`) to make room.
  case maxParkedPerStation
  /// `[server] maxParkedPerAddress`: long polls held at once per client address (`ClientAddress`);
  /// one more is not held: 429 with `Retry-After` (`APIHandler.refusedSync`).
  case maxParkedPerAddress
}

/// When to write the one info line about a limit's hits: at the first hit, then at most once per
/// `intervalMs`, each line with the hits since the previous one, so a flood of refusals costs a
/// line a minute. Pure: the caller passes the time.
public struct HitReport: Sendable, Equatable {
  /// The least time between two lines, ms.
  public static let intervalMs: Int64 = 60_000

  private var lastLineAt: Int64?
  private var unreported = 0

  public init() {}

  /// Counts a hit at `now` (monotonic ms): the hits to report (this one included) when a line is
  /// due now, else nil.
  public mutating func hit(now: Int64) -> Int? {
    unreported += 1
    if let lastLineAt, now - lastLineAt < Self.intervalMs { return nil }
    lastLineAt = now
    defer { unreported = 0 }
    return unreported
  }
}
