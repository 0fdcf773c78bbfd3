extension Database {
  /// Counts one request against `key` in a fixed window of `windowMs` and answers whether it is
  /// within `limit` per window. Kept in the database so the limit holds across every
  /// responder process; a refused request is not counted.
  public func consumeRate(
    key: String, limit: Int, windowMs: Int64, now: Int64
  ) throws(StoreError) -> RateDecision {
    guard windowMs > 0 else { throw .invalidArgument("rate window must be positive") }
    return try writeTransaction { () throws(StoreError) in
      let select = try prepared("SELECT window_start, count FROM rate_limits WHERE key = ?1")
      var window: (start: Int64, count: Int)?
      do {
        defer { select.reset() }
        try select.bind(1, key)
        if try select.step() { window = (select.int64(0), select.int(1)) }
      }
      // A new window starts when none is open, the open one ended, or the clock went back.
      if let window, now >= window.start, now < window.start + windowMs {
        guard window.count < limit else {
          return .limited(retryAfterMs: window.start + windowMs - now)
        }
        let update = try prepared("UPDATE rate_limits SET count = count + 1 WHERE key = ?1")
        defer { update.reset() }
        try update.bind(1, key)
        try update.run()
        return .allowed
      }
      guard limit > 0 else { return .limited(retryAfterMs: windowMs) }
      let upsert = try prepared(
        """
        INSERT INTO rate_limits (key, window_start, count, expires_at) VALUES (?1, ?2, 1, ?3)
        ON CONFLICT (key) DO UPDATE SET
          window_start = excluded.window_start, count = 1, expires_at = excluded.expires_at
        """)
      defer { upsert.reset() }
      try upsert.bind(1, key)
      try upsert.bind(2, now)
      try upsert.bind(3, now + windowMs)
      try upsert.run()
      return .allowed
    }
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
