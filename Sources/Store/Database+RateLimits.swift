extension Database {
  /// Counts one request against `key` in a fixed window of `windowMs` and answers whether it is
  /// within `limit` per window. Kept in the database so the limit holds across every
  /// responder process; a refused request is not counted.
  public func consumeRate(
    key: String, limit: Int, windowMs: Int64, now: Int64
  ) throws(StoreError) -> RateDecision {
    let refusals = try consumeRates([RateCount(key: key, limit: limit)], windowMs: windowMs, now: now)
    return refusals.first.map { .limited(retryAfterMs: $0.retryAfterMs) } ?? .allowed
  }

  /// Counts one request against every key of `counts` at once, each in its own fixed window of
  /// `windowMs`: either the request is within every limit and counted under every key (the answer is
  /// empty), or it is over one or more of them, counted under none, and the answer lists those (in the
  /// order of `counts`). So a request refused by a wide limit does not use up a narrower one.
  public func consumeRates(
    _ counts: [RateCount], windowMs: Int64, now: Int64
  ) throws(StoreError) -> [RateRefusal] {
    guard windowMs > 0 else { throw .invalidArgument("rate window must be positive") }
    return try writeTransaction { () throws(StoreError) -> [RateRefusal] in
      var refusals: [RateRefusal] = []
      var openWindows: [Bool] = []
      for (index, count) in counts.enumerated() {
        let window = try rateWindow(count.key)
        // A new window starts when none is open, the open one ended, or the clock went back.
        if let window, now >= window.start, now < window.start + windowMs {
          openWindows.append(true)
          if window.count >= count.limit {
            refusals.append(RateRefusal(index: index, retryAfterMs: window.start + windowMs - now))
          }
        } else {
          openWindows.append(false)
          if count.limit <= 0 { refusals.append(RateRefusal(index: index, retryAfterMs: windowMs)) }
        }
      }
      guard refusals.isEmpty else { return refusals }
      for (count, isOpen) in zip(counts, openWindows) {
        if isOpen {
          let update = try prepared("UPDATE rate_limits SET count = count + 1 WHERE key = ?1")
          defer { update.reset() }
          try update.bind(1, count.key)
          try update.run()
        } else {
          let upsert = try prepared(
            """
            INSERT INTO rate_limits (key, window_start, count, expires_at) VALUES (?1, ?2, 1, ?3)
            ON CONFLICT (key) DO UPDATE SET
              window_start = excluded.window_start, count = 1, expires_at = excluded.expires_at
            """)
          defer { upsert.reset() }
          try upsert.bind(1, count.key)
          try upsert.bind(2, now)
          try upsert.bind(3, now + windowMs)
          try upsert.run()
        }
      }
      return []
    }
  }

  /// The window stored under `key`, if any (the caller holds the write transaction).
  private func rateWindow(_ key: String) throws(StoreError) -> (start: Int64, count: Int)? {
    let select = try prepared("SELECT window_start, count FROM rate_limits WHERE key = ?1")
    defer { select.reset() }
    try select.bind(1, key)
    return try select.step() ? (select.int64(0), select.int(1)) : nil
  }
}

/// One key a request is counted under by `Database.consumeRates`, and how many requests its window takes.
public struct RateCount: Sendable, Equatable {
  /// The counter's key (`rate_limits.key`), e.g. `new stations from:203.0.113.7`.
  public var key: String
  /// Requests allowed per window.
  public var limit: Int

  public init(key: String, limit: Int) {
    self.key = key
    self.limit = limit
  }
}

/// A limit a request is over (`Database.consumeRates`).
public struct RateRefusal: Sendable, Equatable {
  /// Its place in the counts asked about.
  public var index: Int
  /// When its window lets one more through, in milliseconds from now.
  public var retryAfterMs: Int64

  public init(index: Int, retryAfterMs: Int64) {
    self.index = index
    self.retryAfterMs = retryAfterMs
  }
}

extension Database {
  /// What ``consumeRate(key:limit:windowMs:now:)`` would answer for `key`, without counting anything (inside the
  /// caller's transaction when it holds several limits that must all pass before any is counted).
  public func peekRate(key: String, limit: Int, windowMs: Int64, now: Int64) throws(StoreError)
    -> RateDecision
  {
    guard windowMs > 0 else { throw .invalidArgument("rate window must be positive") }
    let select = try prepared("SELECT window_start, count FROM rate_limits WHERE key = ?1")
    defer { select.reset() }
    try select.bind(1, key)
    if try select.step() {
      let start = select.int64(0)
      if now >= start, now < start + windowMs, select.int(1) >= limit {
        return .limited(retryAfterMs: start + windowMs - now)
      }
    }
    return limit > 0 ? .allowed : .limited(retryAfterMs: windowMs)
  }
}

/// The answer of a rate limit.
public enum RateDecision: Sendable, Equatable {
  /// Within the limit; the request was counted.
  case allowed
  /// Over the limit; try again after this many milliseconds.
  case limited(retryAfterMs: Int64)
}
