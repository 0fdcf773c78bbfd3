/// The stations' forward targets (`sql/019_forward_targets.sql`, docs/api.md "Forwarding"): written by
/// `POST /v1/settings` `forward` and `POST /v1/forward/confirm`, read and disabled by the push sender.
extension Database {
  /// The columns ``forwardTarget(_:)`` reads, in order.
  private static let forwardColumns =
    "station, id, kind, address, secret, priority, always, status, reason, disabled_at, confirm_due, failing_since,"
    + " reason_code"

  /// A station's forward targets, in the order given (every status).
  public func forwardTargets(of station: String) throws(StoreError) -> [ForwardTarget] {
    let statement = try prepared(
      "SELECT \(Self.forwardColumns) FROM forward_targets WHERE station = ?1 ORDER BY position")
    defer { statement.reset() }
    try statement.bind(1, station.canonicalAddress)
    var found: [ForwardTarget] = []
    while try statement.step() {
      if let target = Self.forwardTarget(statement) { found.append(target) }
    }
    return found
  }

  /// Replaces a station's forward targets with `drafts` (at most ``ForwardTarget/maximumPerStation``). A draft with
  /// the id of a target the station has keeps it (its status and confirmation, its secret when the draft gives
  /// none) and takes the draft's `always` and `priority`; if the draft changes its kind, address or secret, it is a
  /// fresh target under a new id. A fresh email target is `unconfirmed` with a confirmation mail due; the others
  /// start `active`. Returns the stored list; nil when the station is not registered.
  /// - Throws: ``StoreError/invalidArgument(_:)`` for too many, an id the station does not have (or one named twice),
  ///   a new target without kind or address, or a webhook without a secret.
  public func replaceForwardTargets(of station: String, with drafts: [ForwardDraft], now: Int64)
    throws(StoreError) -> [ForwardTarget]?
  {
    let address = station.canonicalAddress
    guard drafts.count <= ForwardTarget.maximumPerStation else {
      throw .invalidArgument("at most \(ForwardTarget.maximumPerStation) forward targets")
    }
    return try writeBatch { () throws(StoreError) -> [ForwardTarget]? in
      guard try hasStation(address) else { return nil }
      var existing: [String: ForwardTarget] = [:]
      for target in try forwardTargets(of: address) { existing[target.id] = target }
      var planned: [ForwardTarget] = []
      // A fresh id is never one the station has (a dropped target's id is not reused in the same call).
      var used = Set(drafts.compactMap(\.id)).union(existing.keys)
      var serial = 0
      func freshID() -> String {
        var id = ""
        while id.isEmpty || used.contains(id) {
          id = "f" + String(now, radix: 36) + String(serial, radix: 36)
          serial += 1
        }
        used.insert(id)
        return id
      }
      var named = Set<String>()
      for (index, draft) in drafts.enumerated() {
        if let id = draft.id {
          guard var kept = existing[id] else {
            throw .invalidArgument("[\(index)].id: no forward target \(id)")
          }
          guard named.insert(id).inserted else {
            throw .invalidArgument("[\(index)].id: forward target \(id) is named twice")
          }
          let changed =
            (draft.kind.map { $0 != kept.kind } ?? false)
            || (draft.address.map { $0 != kept.address } ?? false)
            || (draft.secret.map { $0 != kept.secret } ?? false)
          if let always = draft.always { kept.always = always }
          if let priority = draft.priority { kept.priority = priority }
          if changed {
            if let kind = draft.kind, kind != kept.kind {
              // Another type: its own address and secret, nothing of the old one.
              guard draft.address != nil else {
                throw .invalidArgument("[\(index)]: a target given another type needs its address")
              }
              kept.secret = nil
            }
            if let newAddress = draft.address, newAddress != kept.address {
              // The secret (a webhook's signing key, an ntfy token) never goes to another host than the one it
              // was given for: a new address needs its own.
              kept.secret = nil
            }
            kept.kind = draft.kind ?? kept.kind
            kept.address = draft.address ?? kept.address
            kept.secret = draft.secret ?? kept.secret
            if kept.kind == .webhook && kept.secret == nil {
              throw .invalidArgument("[\(index)].secret: a webhook needs a secret")
            }
            kept.id = freshID()
            kept.status = kept.kind == .email ? .unconfirmed : .active
            kept.confirmDue = kept.kind == .email
          }
          planned.append(kept)
        } else {
          guard let kind = draft.kind, let target = draft.address else {
            throw .invalidArgument("[\(index)]: a new forward target needs its type and address")
          }
          if kind == .webhook && draft.secret == nil {
            throw .invalidArgument("[\(index)].secret: a webhook needs a secret")
          }
          planned.append(
            ForwardTarget(
              station: address, id: freshID(), kind: kind, address: target, secret: draft.secret,
              priority: draft.priority ?? 4, always: draft.always ?? false,
              status: kind == .email ? .unconfirmed : .active, confirmDue: kind == .email))
        }
      }
      let keptIDs = Set(planned.map(\.id))
      let remove = try prepared("DELETE FROM forward_targets WHERE station = ?1 AND id = ?2")
      for id in existing.keys where !keptIDs.contains(id) {
        defer { remove.reset() }
        try remove.bind(1, address)
        try remove.bind(2, id)
        try remove.run()
      }
      let upsert = try prepared(
        """
        INSERT INTO forward_targets (station, id, position, kind, address, secret, priority, always, status,
          confirm_due, created_at)
        VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
        ON CONFLICT (station, id) DO UPDATE SET position = excluded.position, priority = excluded.priority,
          always = excluded.always
        """)
      for (position, target) in planned.enumerated() {
        defer { upsert.reset() }
        try upsert.bind(1, address)
        try upsert.bind(2, target.id)
        try upsert.bind(3, position)
        try upsert.bind(4, target.kind.rawValue)
        try upsert.bind(5, target.address)
        try upsert.bind(6, target.secret)
        try upsert.bind(7, target.priority)
        try upsert.bind(8, target.always)
        try upsert.bind(9, target.status.storedName)
        try upsert.bind(10, target.confirmDue)
        try upsert.bind(11, now)
        try upsert.run()
      }
      return try forwardTargets(of: address)
    }
  }

  /// Checks a confirmation code (`code`, as entered) for the email target `id` of `station` in one write
  /// transaction: right and not expired, the target becomes active; wrong,
  /// it is counted, and after ``ForwardTarget/maximumWrongCodes`` the code is void.
  public func confirmForwardTarget(station: String, id: String, code: String, now: Int64)
    throws(StoreError) -> ForwardConfirmation
  {
    let address = station.canonicalAddress
    return try writeTransaction { () throws(StoreError) -> ForwardConfirmation in
      let read = try prepared(
        """
        SELECT \(Self.forwardColumns), confirm_code, confirm_expires_at, confirm_wrong FROM forward_targets
        WHERE station = ?1 AND id = ?2
        """)
      guard
        let (target, hash, expires, wrong) = try { () throws(StoreError) in
          defer { read.reset() }
          try read.bind(1, address)
          try read.bind(2, id)
          guard try read.step(), let target = Self.forwardTarget(read) else {
            return (ForwardTarget, String?, Int64?, Int)?.none
          }
          return (target, read.optionalText(13), read.optionalInt64(14), read.int(15))
        }()
      else { return .notFound }
      guard target.status == .unconfirmed else { return .notPending(target) }
      guard let stored = hash, let expires, expires > now, wrong < ForwardTarget.maximumWrongCodes else {
        return .wrongCode
      }
      guard Self.constantTimeEqual(stored, code) else {
        let count = try prepared(
          "UPDATE forward_targets SET confirm_wrong = confirm_wrong + 1 WHERE station = ?1 AND id = ?2")
        defer { count.reset() }
        try count.bind(1, address)
        try count.bind(2, id)
        try count.run()
        return .wrongCode
      }
      let activate = try prepared(
        """
        UPDATE forward_targets SET status = 'active', confirm_due = 0, confirm_code = NULL,
          confirm_expires_at = NULL, confirm_wrong = 0
        WHERE station = ?1 AND id = ?2
        """)
      defer { activate.reset() }
      try activate.bind(1, address)
      try activate.bind(2, id)
      try activate.run()
      var confirmed = target
      confirmed.status = .active
      confirmed.confirmDue = false
      return .confirmed(confirmed)
    }
  }

  /// Asks for another confirmation mail (with a new code) for the email target `id` of `station`: queued unless
  /// one of its budgets (``ConfirmationBudget``: the station's, the mailbox's, the domain's) had its mails of the
  /// last 24 hours.
  public func resendForwardConfirmation(station: String, id: String, now: Int64) throws(StoreError)
    -> ForwardResend
  {
    let address = station.canonicalAddress
    return try writeTransaction { () throws(StoreError) -> ForwardResend in
      let read = try prepared(
        "SELECT \(Self.forwardColumns) FROM forward_targets WHERE station = ?1 AND id = ?2")
      let found = try { () throws(StoreError) -> ForwardTarget? in
        defer { read.reset() }
        try read.bind(1, address)
        try read.bind(2, id)
        return try read.step() ? Self.forwardTarget(read) : nil
      }()
      guard let target = found else { return .notFound }
      guard target.status == .unconfirmed else { return .notPending(target) }
      for (key, budget) in Self.confirmationLimits(station: address, to: target.address) {
        if case .limited(let retryAfterMs) = try peekRate(
          key: key, limit: budget.limit, windowMs: ForwardTarget.confirmationWindowMs, now: now)
        {
          return .limited(retryAt: now + retryAfterMs, budget: budget)
        }
      }
      let queue = try prepared("UPDATE forward_targets SET confirm_due = 1 WHERE station = ?1 AND id = ?2")
      defer { queue.reset() }
      try queue.bind(1, address)
      try queue.bind(2, id)
      try queue.run()
      var queued = target
      queued.confirmDue = true
      return .queued(queued)
    }
  }

  /// Unconfirmed email targets with a confirmation mail due, at most `limit`.
  public func dueForwardConfirmations(limit: Int = 100) throws(StoreError) -> [ForwardTarget] {
    let statement = try prepared(
      """
      SELECT \(Self.forwardColumns) FROM forward_targets
      WHERE confirm_due > 0 AND status = 'unconfirmed' AND kind = 'email' LIMIT ?1
      """)
    defer { statement.reset() }
    try statement.bind(1, limit)
    var found: [ForwardTarget] = []
    while try statement.step() {
      if let target = Self.forwardTarget(statement) { found.append(target) }
    }
    return found
  }

  /// Takes one due confirmation mail for sending, in one write transaction, and returns the code it carries (nil:
  /// none goes out; the due flag is cleared either way). A mail due again after a passing failure carries the code
  /// kept (while it is good); a new one carries `newCode` (6 digits; kept in the clear: a hash would add nothing to
  /// a million candidates, which the wrong-code limit guards), good until `now` +
  /// ``ForwardTarget/confirmationLifetimeMs``, and is counted against each of its budgets (``ConfirmationBudget``):
  /// none goes past one of them in 24 hours.
  public func beginForwardConfirmation(station: String, id: String, newCode: String, now: Int64)
    throws(StoreError) -> String?
  {
    try writeBatch { () throws(StoreError) -> String? in
      let read = try prepared(
        """
        SELECT address, confirm_due, confirm_code, confirm_expires_at FROM forward_targets
        WHERE station = ?1 AND id = ?2 AND status = 'unconfirmed' AND confirm_due > 0
        """)
      let found = try { () throws(StoreError) -> (String, Int, String?, Int64?)? in
        defer { read.reset() }
        try read.bind(1, station)
        try read.bind(2, id)
        guard try read.step() else { return nil }
        return (read.text(0), read.int(1), read.optionalText(2), read.optionalInt64(3))
      }()
      guard let (address, due, kept, expires) = found else { return nil }
      let clear = try prepared("UPDATE forward_targets SET confirm_due = 0 WHERE station = ?1 AND id = ?2")
      do {
        defer { clear.reset() }
        try clear.bind(1, station)
        try clear.bind(2, id)
        try clear.run()
      }
      if due == 2, let kept, let expires, expires > now { return kept }
      // Counted against every budget only when all allow it: a refused mail uses up none.
      let limits = Self.confirmationLimits(station: station, to: address)
      for (key, budget) in limits {
        let decision = try peekRate(
          key: key, limit: budget.limit, windowMs: ForwardTarget.confirmationWindowMs, now: now)
        guard decision == .allowed else { return nil }
      }
      for (key, budget) in limits {
        _ = try consumeRate(
          key: key, limit: budget.limit, windowMs: ForwardTarget.confirmationWindowMs, now: now)
      }
      let store = try prepared(
        """
        UPDATE forward_targets SET confirm_code = ?3, confirm_expires_at = ?4, confirm_wrong = 0
        WHERE station = ?1 AND id = ?2
        """)
      defer { store.reset() }
      try store.bind(1, station)
      try store.bind(2, id)
      try store.bind(3, newCode)
      try store.bind(4, now + ForwardTarget.confirmationLifetimeMs)
      try store.run()
      return newCode
    }
  }

  /// A confirmation mail that could not be sent for a passing reason: due again with the same code, not counted
  /// again.
  public func requeueForwardConfirmation(station: String, id: String) throws(StoreError) {
    let statement = try prepared(
      """
      UPDATE forward_targets SET confirm_due = 2
      WHERE station = ?1 AND id = ?2 AND status = 'unconfirmed' AND confirm_code IS NOT NULL
      """)
    defer { statement.reset() }
    try statement.bind(1, station)
    try statement.bind(2, id)
    try statement.run()
  }

  /// The `rate_limits` key confirmation mails to `address` are counted under: its mailbox (``mailbox(_:)``).
  static func confirmationKey(_ address: String) -> String {
    RateKey.forwardConfirmationsTo + Self.mailbox(address)
  }

  /// The confirmation mails' budgets, each a rate key and its budget (24 hours): the sending station's, the
  /// mailbox's (``confirmationKey(_:)``), and the domain's unless a big public provider's
  /// (``confirmationDomain(_:)``).
  static func confirmationLimits(station: String, to address: String) -> [(String, ConfirmationBudget)] {
    var limits: [(String, ConfirmationBudget)] = [
      (RateKey.forwardConfirmationsFrom + station, .station), (confirmationKey(address), .address),
    ]
    if let domain = confirmationDomain(address) {
      limits.append((RateKey.forwardConfirmationsToDomain + domain, .domain))
    }
    return limits
  }

  /// The mailbox a mail address reaches, for counting (`MailboxKey.mailbox(_:)`): lower case, without a `+tag`,
  /// and at Gmail without dots (`J.Doe+7@GoogleMail.com` → `jdoe@gmail.com`), so variants of one mailbox share
  /// its budget.
  static func mailbox(_ address: String) -> String { MailboxKey.mailbox(address) }

  /// The domain whose budget mails to `address` count against, nil for a big public provider's
  /// (`MailboxKey.domain(_:)`).
  static func confirmationDomain(_ address: String) -> String? { MailboxKey.domain(address) }

  /// Disables targets the push sender found dead (joins a `writeBatch`): `status` disabled with the reason, its
  /// class and `now`; a failure in progress ends. A target the owner replaced meanwhile (another id) is not touched.
  public func disableForwardTargets(_ targets: [ForwardDisable], now: Int64) throws(StoreError) {
    guard !targets.isEmpty else { return }
    try writeTransaction { () throws(StoreError) in
      let statement = try prepared(
        """
        UPDATE forward_targets SET status = 'disabled', reason = ?3, disabled_at = ?4, confirm_due = 0,
          reason_code = ?5, failing_since = NULL
        WHERE station = ?1 AND id = ?2
        """)
      for target in targets {
        defer { statement.reset() }
        try statement.bind(1, target.station)
        try statement.bind(2, target.id)
        try statement.bind(3, String(target.reason.prefix(300)))
        try statement.bind(4, now)
        try statement.bind(5, target.problem?.rawValue)
        try statement.run()
      }
    }
  }

  /// Records what the push sender found of active targets' health (joins a `writeBatch`): a failure makes the
  /// target `failing` with the reason and its class (since `now`, or since the failure in progress began); a
  /// delivery makes it active again (nothing to confirm again). Targets that are not active (disabled meanwhile,
  /// replaced, unconfirmed) are not touched.
  public func recordForwardHealth(_ changes: [ForwardHealth], now: Int64) throws(StoreError) {
    guard !changes.isEmpty else { return }
    try writeTransaction { () throws(StoreError) in
      let failing = try prepared(
        """
        UPDATE forward_targets SET failing_since = coalesce(failing_since, ?3), reason = ?4, reason_code = ?5
        WHERE station = ?1 AND id = ?2 AND status = 'active'
        """)
      let recovered = try prepared(
        """
        UPDATE forward_targets SET failing_since = NULL, reason = NULL, reason_code = NULL
        WHERE station = ?1 AND id = ?2 AND status = 'active' AND failing_since IS NOT NULL
        """)
      for change in changes {
        if let failure = change.failure {
          defer { failing.reset() }
          try failing.bind(1, change.station)
          try failing.bind(2, change.id)
          try failing.bind(3, now)
          try failing.bind(4, String(failure.reason.prefix(300)))
          try failing.bind(5, failure.problem.rawValue)
          try failing.run()
        } else {
          defer { recovered.reset() }
          try recovered.bind(1, change.station)
          try recovered.bind(2, change.id)
          try recovered.run()
        }
      }
    }
  }

  /// The stations' targets counted by type, status (`failing` apart from `active`) and reason class, for
  /// `/metrics`; only the combinations some target is in.
  public func forwardTargetCounts() throws(StoreError) -> [ForwardTargetCount] {
    let statement = try prepared(
      """
      SELECT kind, CASE WHEN status = 'active' AND failing_since IS NOT NULL THEN 'failing' ELSE status END,
        reason_code, count(*)
      FROM forward_targets GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
      """)
    defer { statement.reset() }
    var counts: [ForwardTargetCount] = []
    while try statement.step() {
      guard let kind = statement.optionalValue(0, as: ForwardKind.self) else { continue }
      counts.append(
        ForwardTargetCount(
          kind: kind, status: statement.text(1), problem: statement.optionalValue(2, as: ForwardProblem.self),
          count: statement.int(3)))
    }
    return counts
  }

  /// Equal strings compared in time that depends only on their lengths.
  static func constantTimeEqual(_ a: String, _ b: String) -> Bool {
    let x = Array(a.utf8)
    let y = Array(b.utf8)
    guard x.count == y.count else { return false }
    var difference: UInt8 = 0
    for index in x.indices { difference |= x[index] ^ y[index] }
    return difference == 0
  }

  /// Reads one row of ``forwardColumns``; nil for a row edited by hand into something unreadable.
  static func forwardTarget(_ row: Statement) -> ForwardTarget? {
    guard let kind = row.optionalValue(2, as: ForwardKind.self) else { return nil }
    let status: ForwardStatus
    switch row.text(7) {
    case "active":
      if let since = row.optionalInt64(11) {
        status = .failing(reason: row.optionalText(8) ?? "", since: since)
      } else {
        status = .active
      }
    case "unconfirmed": status = .unconfirmed
    case "disabled": status = .disabled(reason: row.text(8), at: row.int64(9))
    default: return nil
    }
    return ForwardTarget(
      station: row.text(0), id: row.text(1), kind: kind, address: row.text(3), secret: row.optionalText(4),
      priority: min(5, max(1, row.int(5))), always: row.bool(6), status: status, confirmDue: row.bool(10),
      problem: row.optionalValue(12, as: ForwardProblem.self))
  }
}
