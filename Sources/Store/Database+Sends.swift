/// Outbound messages (`/v1/send`, `sql/007_sends.sql`): the responder creates them, the listener schedules,
/// records and ends them. Every state change re-stamps the message with `max(now, last + 1)`, as a new message
/// would be stamped, so a client following the sync cursor sees it again and a long poll wakes on it.
extension Database {
  /// The `rate_limits` window of the per-minute send limit.
  public static let sendRateWindowMs: Int64 = 60_000
  /// The largest message number this server gives (numbers are decimal, 1–99999, wrapping).
  public static let maximumSendNumber = 99_999

  // MARK: The responder

  /// The `rate_limits` key of the global send limit (no station or address key can be this: it has a space).
  static let globalSendRateKey = "sends global"
  /// The sends accepted past everyone's budget to wait for the next minute (at most as many as the budget).
  static let queuedSendRateKey = "sends global queued"
  /// The window of `[send] bulletinsPerDay` (ms): a sliding 24 h.
  public static let bulletinWindowMs: Int64 = 86_400_000

  /// Creates a send in ONE write transaction, in this order: the station must be registered; a `clientId` the
  /// station used before returns that message (nothing new, no limit counted); the station's sends in flight
  /// must stay below `limits.inFlight`; then its sends this minute within `limits.perMinute`, the client
  /// address's within `limits.perAddressPerMinute` and everyone's within `limits.globalPerMinute` (all three
  /// checked before any is counted: a refused send counts against none; every refusal, in flight included,
  /// counts a hit of its `LimitName`; one network and one station take only their shares of everyone's,
  /// ``SendLimits/networkShare``). Past everyone's budget but within the caller's shares, the send is accepted to
  /// wait for the next minute while the minute ahead has room (``queuedSendRateKey``): its `budget_delay_ms` is
  /// the wait, so its first copy (and its whole schedule) comes that much later. Then the message gets the
  /// station's next free message number (unique among its sends in flight), is stored as a `sent` message with
  /// the cursor's next timestamp (the ring is trimmed, sparing sends in flight), and its `sends` row waits for the
  /// listener to schedule it.
  ///
  /// A bulletin (``SendKind/bulletin``) is never in flight waiting for an answer, so the in-flight limit does not
  /// hold it; instead the station's bulletins accepted in the last 24 h must stay below `limits.bulletinsPerDay`
  /// (``bulletinsToday(station:now:)``; past it, `.tooManyBulletins`), then the per-minute limits hold it as any
  /// send. It gets no message number, is logged in `bulletin_log` and writes a `bulletin` audit entry.
  public func createSend(_ send: NewSend, limits: SendLimits, now: Int64) throws(StoreError) -> SendCreation {
    let station = send.station.canonicalAddress
    let addressee = send.addressee.canonicalAddress
    guard !station.isEmpty, !addressee.isEmpty, !send.text.isEmpty else {
      throw .invalidArgument("a send needs a station, an addressee and a text")
    }
    return try writeBatch { () throws(StoreError) -> SendCreation in
      guard try hasStation(station) else { return .unknownStation }
      if let clientId = send.clientId, let id = try sendID(station: station, clientId: clientId) {
        guard let message = try sentMessage(id: id) else { throw .corrupt("send \(id) has no message") }
        return .replayed(message, serverTime: try lastMessageTimestamp())
      }
      if send.kind == .bulletin {
        let today = try bulletinsToday(station: station, now: now)
        if today.count >= limits.bulletinsPerDay {
          try countLimitHit(.bulletinsPerDay)
          // The oldest of the day's that must leave the window before one more fits.
          let oldest = today[today.count - limits.bulletinsPerDay]
          return .tooManyBulletins(retryAfterMs: max(1, oldest + Self.bulletinWindowMs - now))
        }
      } else {
        guard try sendsInFlight(station: station) < limits.inFlight else {
          try countLimitHit(.sendsInFlight)
          return .tooManyInFlight
        }
      }
      // Narrowest first: the station, the address, its networks (each a share of everyone's), everyone.
      var rates: [(key: String, limit: Int, network: String?)] = [
        ("sends:\(station)", limits.stationPerMinute, nil)
      ]
      if let address = limits.address {
        rates.append(("sends from:\(address)", limits.perAddressPerMinute, nil))
      }
      if let network = limits.network {
        rates.append(("sends from network:\(network)", limits.share(SendLimits.networkShare), network))
      }
      if let wide = limits.wideNetwork {
        rates.append(("sends from network:\(wide)", limits.share(SendLimits.wideNetworkShare), wide))
      }
      rates.append((Self.globalSendRateKey, limits.globalPerMinute, nil))
      // Past everyone's budget, but within the caller's shares: the send waits for the next minute (its first
      // copy then), while the minute ahead has room; only then is it refused.
      var queuedForMs: Int64 = 0
      for (index, rate) in rates.enumerated() {
        let decision = try peekRate(
          key: rate.key, limit: rate.limit, windowMs: Self.sendRateWindowMs, now: now)
        guard case .limited(let retryAfterMs) = decision else { continue }
        if index == rates.count - 1,
          case .allowed = try peekRate(
            key: Self.queuedSendRateKey, limit: limits.globalPerMinute, windowMs: Self.sendRateWindowMs,
            now: now)
        {
          queuedForMs = retryAfterMs
          rates[index] = (Self.queuedSendRateKey, limits.globalPerMinute, nil)
          continue
        }
        if index == 0 {
          try countLimitHit(.sendsPerStationPerMinute)
          return .tooManyPerMinute(retryAfterMs: retryAfterMs)
        }
        if index == rates.count - 1 {
          try countLimitHit(.sendsPerMinuteGlobal)
          return .tooManyGlobal(retryAfterMs: retryAfterMs)
        }
        if let network = rate.network {
          try countLimitHit(.sendsPerNetworkPerMinute)
          return .tooManyFromNetwork(retryAfterMs: retryAfterMs, network: network, limit: rate.limit)
        }
        try countLimitHit(.sendsPerAddressPerMinute)
        return .tooManyFromAddress(retryAfterMs: retryAfterMs)
      }
      for rate in rates {
        _ = try consumeRate(key: rate.key, limit: rate.limit, windowMs: Self.sendRateWindowMs, now: now)
      }
      let msgno = send.kind == .bulletin ? nil : try nextSendNumber(station: station)
      let timestamp = try nextMessageTimestamp(now: now)
      let insert = try prepared(
        """
        INSERT INTO messages (station, direction, peer, text, msgno, timestamp, kind, subscription, room)
        VALUES (?1, 'sent', ?2, ?3, ?4, ?5, ?6, ?7, ?8)
        """)
      do {
        defer { insert.reset() }
        try insert.bind(1, station)
        try insert.bind(2, addressee)
        try insert.bind(3, send.text)
        try insert.bind(4, msgno)
        try insert.bind(5, timestamp)
        try insert.bind(6, send.entry?.storedKind.rawValue)
        try insert.bind(7, send.entry?.subscription)
        try insert.bind(8, send.entry?.room?.description)
        try insert.run()
      }
      let id = lastInsertRowID
      let row = try prepared(
        """
        INSERT INTO sends (message_id, station, addressee, msgno, client_id, state, created_at, budget_delay_ms,
                           kind)
        VALUES (?1, ?2, ?3, ?4, ?5, 'pending', ?6, ?7, ?8)
        """)
      do {
        defer { row.reset() }
        try row.bind(1, id)
        try row.bind(2, station)
        try row.bind(3, addressee)
        try row.bind(4, msgno)
        try row.bind(5, send.clientId)
        try row.bind(6, now)
        try row.bind(7, queuedForMs)
        try row.bind(8, send.kind)
        try row.run()
      }
      if send.kind == .bulletin {
        try logBulletin(station: station, now: now)
        try recordAudit(
          AuditEntry(
            station: station, at: now, action: .bulletin, client: send.client, detail: "\(addressee) sent"))
      }
      try trimRing(station, ring: .of(to: nil, entry: send.entry))
      try addToMetaCounter(SendStatus.acceptedKey, 1)
      let message = StoredMessage(
        direction: .sent, peer: addressee, text: send.text, msgno: msgno, timestamp: timestamp,
        state: .pending, clientId: send.clientId, entry: send.entry)
      return .created(message, serverTime: timestamp)
    }
  }

  /// The message with this id as sync shows it, nil when there is none.
  public func sentMessage(id: Int64) throws(StoreError) -> StoredMessage? {
    let statement = try prepared(
      """
      SELECT messages.direction, messages.peer, messages.text, messages.msgno, messages.timestamp,
             sends.state, sends.client_id, messages.addressee, messages.kind, messages.subscription,
             messages.event, messages.latitude, messages.longitude, messages.answered_by, messages.heard_state,
             messages.room
      FROM messages LEFT JOIN sends ON sends.message_id = messages.id WHERE messages.id = ?1
      """)
    defer { statement.reset() }
    try statement.bind(1, id)
    return try statement.step() ? try Self.storedMessage(statement) : nil
  }

  /// The id of the station's send with this `clientId`, nil when there is none.
  func sendID(station: String, clientId: String) throws(StoreError) -> Int64? {
    let statement = try prepared("SELECT message_id FROM sends WHERE station = ?1 AND client_id = ?2")
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, clientId)
    return try statement.step() ? statement.int64(0) : nil
  }

  /// How many of the station's (canonical) messages are in flight (bulletins not counted: none waits for an
  /// answer).
  func sendsInFlight(station: String) throws(StoreError) -> Int {
    let statement = try prepared(
      "SELECT count(*) FROM sends WHERE station = ?1 AND state = 'pending' AND kind = 'message'")
    defer { statement.reset() }
    try statement.bind(1, station)
    return try statement.step() ? statement.int(0) : 0
  }

  /// When the station's (canonical) bulletins of the last 24 h (``bulletinWindowMs``) before `now` were accepted,
  /// oldest first (epoch ms).
  func bulletinsToday(station: String, now: Int64) throws(StoreError) -> [Int64] {
    let statement = try prepared(
      "SELECT accepted_at FROM bulletin_log WHERE station = ?1 AND accepted_at > ?2 ORDER BY accepted_at")
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, now - Self.bulletinWindowMs)
    var times: [Int64] = []
    while try statement.step() { times.append(statement.int64(0)) }
    return times
  }

  /// Logs a bulletin of the station accepted at `now` and deletes every entry older than the window (inside the
  /// caller's write transaction).
  private func logBulletin(station: String, now: Int64) throws(StoreError) {
    let prune = try prepared("DELETE FROM bulletin_log WHERE accepted_at <= ?1")
    do {
      defer { prune.reset() }
      try prune.bind(1, now - Self.bulletinWindowMs)
      try prune.run()
    }
    let insert = try prepared("INSERT INTO bulletin_log (station, accepted_at) VALUES (?1, ?2)")
    defer { insert.reset() }
    try insert.bind(1, station)
    try insert.bind(2, now)
    try insert.run()
  }

  /// The station's next message number: one past the last it was given (99999 wraps to 1), skipping numbers
  /// of its sends in flight; remembered in `send_numbers`. Inside the caller's write transaction.
  private func nextSendNumber(station: String) throws(StoreError) -> String {
    let select = try prepared("SELECT last FROM send_numbers WHERE station = ?1")
    var last = 0
    do {
      defer { select.reset() }
      try select.bind(1, station)
      if try select.step() { last = select.int(0) }
    }
    let taken = try prepared("SELECT 1 FROM sends WHERE station = ?1 AND msgno = ?2 AND state = 'pending'")
    var candidate = last
    for _ in 0..<Self.maximumSendNumber {
      candidate = candidate % Self.maximumSendNumber + 1
      defer { taken.reset() }
      try taken.bind(1, station)
      try taken.bind(2, String(candidate))
      if try !taken.step() { break }
    }
    let upsert = try prepared(
      """
      INSERT INTO send_numbers (station, last) VALUES (?1, ?2)
      ON CONFLICT (station) DO UPDATE SET last = excluded.last
      """)
    defer { upsert.reset() }
    try upsert.bind(1, station)
    try upsert.bind(2, candidate)
    try upsert.run()
    return String(candidate)
  }

  /// The next message timestamp, `max(now, last + 1)`, recorded as the newest (inside the caller's write
  /// transaction): the cursor rule of `storeMessages`, for a new sent message and for a re-stamp.
  func nextMessageTimestamp(now: Int64) throws(StoreError) -> Int64 {
    let timestamp = max(now, try lastMessageTimestamp() + 1)
    try setMetaValue(Self.lastMessageTimestampKey, String(timestamp))
    return timestamp
  }

  // MARK: The listener

  /// The sends in flight that need the scheduler at `now`, the copy due first first (a row never scheduled counts
  /// as due when it was created; the transmit budget lets copies out in this order): those never scheduled, those
  /// past their expiry, and (when `canTransmit`) those whose next copy is due.
  public func dueSends(now: Int64, canTransmit: Bool, limit: Int = 500) throws(StoreError) -> [InFlightSend] {
    let statement = try prepared(
      """
      SELECT sends.message_id, sends.station, sends.addressee, messages.text, sends.msgno, sends.created_at,
             sends.transmissions, sends.last_sent_at, sends.next_at, sends.expires_at, sends.budget_delay_ms,
             sends.kind
      FROM sends JOIN messages ON messages.id = sends.message_id
      WHERE sends.state = 'pending'
        AND (sends.expires_at IS NULL OR sends.expires_at <= ?1 OR (?2 AND sends.next_at <= ?1))
      ORDER BY coalesce(sends.next_at, sends.created_at), sends.message_id LIMIT ?3
      """)
    defer { statement.reset() }
    try statement.bind(1, now)
    try statement.bind(2, canTransmit)
    try statement.bind(3, limit)
    var sends: [InFlightSend] = []
    while try statement.step() {
      sends.append(
        InFlightSend(
          id: statement.int64(0), station: statement.text(1), addressee: statement.text(2),
          text: statement.text(3), msgno: statement.optionalText(4), createdAt: statement.int64(5),
          transmissions: statement.int(6), lastSentAt: statement.optionalInt64(7),
          nextAt: statement.optionalInt64(8), expiresAt: statement.optionalInt64(9),
          budgetDelayMs: statement.int64(10), kind: try statement.value(11)))
    }
    return sends
  }

  /// When the last copy of each send was recorded, for the sends whose last copy is at `since` or later (epoch
  /// ms, oldest first, any state): what a listener that starts puts in its transmit budget, so a restart is no
  /// fresh minute. A send's earlier copies are not kept, so this is at most the copies of the last minute.
  public func recentTransmissions(since: Int64) throws(StoreError) -> [Int64] {
    let statement = try prepared(
      "SELECT last_sent_at FROM sends WHERE last_sent_at >= ?1 ORDER BY last_sent_at LIMIT 10000")
    defer { statement.reset() }
    try statement.bind(1, since)
    var times: [Int64] = []
    while try statement.step() { times.append(statement.int64(0)) }
    return times
  }

  /// When the scheduler next has something to do (epoch ms; nil: nothing in flight): the earliest expiry, the
  /// earliest next copy when `canTransmit`, or `now` for a send never scheduled.
  public func nextSendEvent(now: Int64, canTransmit: Bool) throws(StoreError) -> Int64? {
    let statement = try prepared(
      """
      SELECT min(expires_at), min(next_at), max(expires_at IS NULL) FROM sends WHERE state = 'pending'
      """)
    defer { statement.reset() }
    guard try statement.step() else { return nil }
    if statement.int(2) == 1 { return now }
    var next = statement.optionalInt64(0)
    if canTransmit, let copy = statement.optionalInt64(1) { next = min(next ?? copy, copy) }
    return next
  }

  /// Records the scheduler's decisions in ONE write transaction: copies about to be written (counted, with their
  /// next copy and expiry, and the time the transmit budget held them back), new schedules, expiries (each
  /// re-stamped, with a `sendFailed` push queued) and bulletins whose schedule is over (re-stamped, no push).
  /// Only rows still `pending` change (an answer may have ended one since it was read). Returns the sends that
  /// ended, and the ids of the copies that were recorded (write only those).
  public func recordSendSchedule(_ decisions: [SendScheduleChange], now: Int64) throws(StoreError)
    -> (transmitted: [Int64], finished: [FinishedSend])
  {
    guard !decisions.isEmpty else { return ([], []) }
    return try writeBatch { () throws(StoreError) in
      var transmitted: [Int64] = []
      var bulletins = 0
      var delayed = 0
      var finished: [FinishedSend] = []
      for decision in decisions {
        switch decision {
        case .transmitted(let id, let at, let nextAt, let expiresAt, let budgetDelayMs):
          let statement = try prepared(
            """
            UPDATE sends SET transmissions = transmissions + 1, last_sent_at = ?2, next_at = ?3, expires_at = ?4,
                             budget_delay_ms = budget_delay_ms + ?5
            WHERE message_id = ?1 AND state = 'pending' RETURNING kind
            """)
          defer { statement.reset() }
          try statement.bind(1, id)
          try statement.bind(2, at)
          try statement.bind(3, nextAt)
          try statement.bind(4, expiresAt)
          try statement.bind(5, max(0, budgetDelayMs))
          if try statement.step() {
            if statement.text(0) == SendKind.bulletin.rawValue { bulletins += 1 }
            while try statement.step() {}
            transmitted.append(id)
            if budgetDelayMs > 0 { delayed += 1 }
          }
        case .scheduled(let id, let nextAt, let expiresAt):
          let statement = try prepared(
            "UPDATE sends SET next_at = ?2, expires_at = ?3 WHERE message_id = ?1 AND state = 'pending'")
          defer { statement.reset() }
          try statement.bind(1, id)
          try statement.bind(2, nextAt)
          try statement.bind(3, expiresAt)
          try statement.run()
        case .expired(let id):
          if let done = try finishSend(id: id, state: .expired, now: now) { finished.append(done) }
        case .completed(let id):
          if let done = try finishSend(id: id, state: .completed, now: now) { finished.append(done) }
        }
      }
      try addToMetaCounter(SendStatus.transmissionsKey, transmitted.count)
      try addToMetaCounter(SendStatus.bulletinTransmissionsKey, bulletins)
      try addToMetaCounter(SendStatus.budgetDelayedKey, delayed)
      return (transmitted, finished)
    }
  }

  /// Ends the sends in flight these answers stop (inside the caller's `writeBatch`, or in a transaction of its
  /// own): an `ack` or a reply-ack makes the station's send with that number to that peer `acked`, a `rej`
  /// makes it `rejected` (with a `sendFailed` push queued). The peer must be the send's addressee (compared
  /// case-insensitively); answers that match nothing in flight are ignored. Returns the sends that ended.
  public func answerSends(_ answers: [SendAnswer], now: Int64) throws(StoreError) -> [FinishedSend] {
    guard !answers.isEmpty else { return [] }
    return try writeBatch { () throws(StoreError) in
      let select = try prepared(
        """
        SELECT message_id FROM sends
        WHERE station = ?1 AND msgno = ?2 AND addressee = ?3 AND state = 'pending'
        """)
      var finished: [FinishedSend] = []
      for answer in answers {
        var id: Int64?
        do {
          defer { select.reset() }
          try select.bind(1, answer.station.canonicalAddress)
          try select.bind(2, answer.msgno)
          try select.bind(3, answer.peer.canonicalAddress)
          if try select.step() { id = select.int64(0) }
        }
        if let id, let done = try finishSend(id: id, state: answer.kind.state, now: now) {
          finished.append(done)
        }
      }
      return finished
    }
  }

  /// Cancels the station's send with this `clientId` (docs/protocol.md "Owned stations": `/v1/send` `cancel`) in ONE
  /// write transaction: a send in flight ends `cancelled` (its schedule cleared, the message re-stamped, counted;
  /// no push: the station itself stopped it), so the listener never transmits it again; a send that already
  /// ended is answered as it is. A bulletin cancelled writes a `bulletin` audit entry (`client`: the client as the
  /// limits key it).
  public func cancelSend(station: String, clientId: String, now: Int64, client: String = "")
    throws(StoreError) -> SendCancellation
  {
    let station = station.canonicalAddress
    return try writeBatch { () throws(StoreError) -> SendCancellation in
      guard try hasStation(station) else { return .unknownStation }
      guard let id = try sendID(station: station, clientId: clientId),
        let message = try sentMessage(id: id)
      else { return .unknownClientId }
      guard message.state == .pending, let done = try finishSend(id: id, state: .cancelled, now: now) else {
        return .finished(message, serverTime: try lastMessageTimestamp())
      }
      guard let cancelled = try sentMessage(id: id) else { throw .corrupt("send \(id) has no message") }
      if done.kind == .bulletin {
        try recordAudit(
          AuditEntry(
            station: station, at: now, action: .bulletin, client: client,
            detail: "\(done.addressee) cancelled"))
      }
      return .cancelled(cancelled, serverTime: done.timestamp)
    }
  }

  /// Moves a pending send to `state` (inside the caller's write transaction): the schedule cleared, the message
  /// re-stamped, the outcome counted, and for `rejected` and `expired` a push queued. Nil when it was not
  /// pending (or is gone).
  func finishSend(id: Int64, state: SendState, now: Int64) throws(StoreError) -> FinishedSend? {
    let select = try prepared(
      "SELECT station, addressee, msgno, kind FROM sends WHERE message_id = ?1 AND state = 'pending'")
    var found: (station: String, addressee: String, msgno: String?, kind: SendKind)?
    do {
      defer { select.reset() }
      try select.bind(1, id)
      if try select.step() {
        found = (select.text(0), select.text(1), select.optionalText(2), try select.value(3))
      }
    }
    guard let found, state != .pending else { return nil }
    let update = try prepared(
      """
      UPDATE sends SET state = ?2, finished_at = ?3, next_at = NULL, expires_at = NULL
      WHERE message_id = ?1 AND state = 'pending'
      """)
    do {
      defer { update.reset() }
      try update.bind(1, id)
      try update.bind(2, state)
      try update.bind(3, now)
      try update.run()
    }
    let timestamp = try nextMessageTimestamp(now: now)
    let restamp = try prepared("UPDATE messages SET timestamp = ?2 WHERE id = ?1")
    do {
      defer { restamp.reset() }
      try restamp.bind(1, id)
      try restamp.bind(2, timestamp)
      try restamp.run()
    }
    try addToMetaCounter(SendStatus.key(state), 1)
    if state == .rejected || state == .expired {
      try queuePush(station: found.station, messageID: id, now: now)
    }
    return FinishedSend(
      id: id, station: found.station, addressee: found.addressee, msgno: found.msgno, kind: found.kind,
      state: state, timestamp: timestamp)
  }

  // MARK: Metrics

  /// The sends counters and the in-flight gauge, from one snapshot. Never writes.
  public func sendStatus() throws(StoreError) -> SendStatus {
    try readTransaction { () throws(StoreError) in
      let statement = try prepared("SELECT count(*) FROM sends WHERE state = 'pending'")
      defer { statement.reset() }
      let inFlight = try statement.step() ? statement.int(0) : 0
      return SendStatus(metaRows: try metaValues(prefix: SendStatus.keyPrefix), inFlight: inFlight)
    }
  }
}
