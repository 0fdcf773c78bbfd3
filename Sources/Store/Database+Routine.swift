/// The listener's periodic maintenance as one call, so the listener (every hour) and
/// `aprs-cloud maintenance` (once, now) run exactly the same steps.
extension Database {
  /// Prunes what expired (bookkeeping, old receipts, stations and tokens past `plan.stationExpiryMs`)
  /// and then checkpoints the write-ahead log as `plan.checkpoint` says. Each step is its own short
  /// transaction, safe while the responder, the listener and Litestream run. `windowsNow`: the time the dedup
  /// and ACK windows are judged by (`pruneExpired(now:windowsNow:ackRetentionMs:)`).
  public func runMaintenance(
    _ plan: MaintenancePlan, now: Int64, windowsNow: Int64? = nil
  ) throws(StoreError) -> MaintenanceReport {
    let pruned = try pruneExpired(now: now, windowsNow: windowsNow)
    let receipts = try pruneReceipts(before: now - plan.receiptRetentionMs)
    let stations = try pruneStations(now: now, expiryMs: plan.stationExpiryMs)
    let claimsLapsed = try lapseClaims(now: now, expiryMs: plan.stationExpiryMs)
    try pruneClaimRequests(now: now)
    try pruneStationHistory(now: now, expiryMs: plan.stationExpiryMs)
    try pruneAuditTrail(now: now)
    var checkpoint: CheckpointResult?
    switch plan.checkpoint {
    case .truncate:
      // The -wal file must not stay as large as its biggest burst; a reader that holds it up only
      // postpones this to the next round.
      checkpoint = try self.checkpoint(mode: .truncate)
    case .leaveToReplication:
      // Litestream holds a read transaction to see every frame before it is checkpointed, and runs
      // its own checkpoints: a TRUNCATE here would stall the writers for the busy timeout, and one
      // that got through would reset the log under Litestream (a new snapshot to upload).
      checkpoint = nil
    }
    return MaintenanceReport(
      pruned: pruned, receipts: receipts, stations: stations, claimsLapsed: claimsLapsed,
      checkpoint: checkpoint)
  }
}

/// Who checkpoints the write-ahead log.
public enum CheckpointPolicy: String, Sendable, Equatable {
  /// The maintenance truncates it (`wal_checkpoint(TRUNCATE)`): no replication runs.
  case truncate
  /// Litestream replicates the database and owns the checkpoints: the maintenance runs none.
  case leaveToReplication
}

/// What one maintenance run does.
public struct MaintenancePlan: Sendable, Equatable {
  /// Stations and push tokens not heard within this window are deleted (ms; the configured
  /// `stationExpiry`).
  public var stationExpiryMs: Int64
  /// Delivery receipts older than this are deleted (ms).
  public var receiptRetentionMs: Int64
  /// Who checkpoints the write-ahead log.
  public var checkpoint: CheckpointPolicy

  /// The receipt retention the listener uses: a week.
  public static let defaultReceiptRetentionMs: Int64 = 7 * 86_400_000

  public init(
    stationExpiryMs: Int64, receiptRetentionMs: Int64 = MaintenancePlan.defaultReceiptRetentionMs,
    checkpoint: CheckpointPolicy
  ) {
    self.stationExpiryMs = stationExpiryMs
    self.receiptRetentionMs = receiptRetentionMs
    self.checkpoint = checkpoint
  }
}

/// What `Database.runMaintenance(_:now:)` did.
public struct MaintenanceReport: Sendable, Equatable {
  /// Expired dedup keys, ACK times and rate-limit windows deleted.
  public var pruned: PruneResult
  /// Delivery receipts deleted.
  public var receipts: Int
  /// Stations, tokens and their messages deleted.
  public var stations: StationPruneResult
  /// Claims released because no request with the station key refreshed them within the station expiry.
  public var claimsLapsed: Int = 0
  /// The checkpoint's result; nil when the policy left it to replication.
  public var checkpoint: CheckpointResult?

  /// Every count as `key=value` fields, in a stable order (the listener's `maintenance` log line and
  /// `aprs-cloud maintenance` print these).
  public var fields: [(String, String)] {
    var fields = [
      ("dedup", String(pruned.dedup)), ("acks", String(pruned.acks)),
      ("rateLimits", String(pruned.rateLimits)),
      ("receipts", String(receipts)), ("stationsPruned", String(stations.stations)),
      ("devicesPruned", String(stations.devices)), ("messagesPruned", String(stations.messages)),
      ("claimsLapsed", String(claimsLapsed)),
    ]
    if let checkpoint {
      fields += [
        ("checkpoint", "truncate"), ("walFrames", String(checkpoint.walFrames)),
        ("checkpointBusy", String(checkpoint.busy)),
      ]
    } else {
      fields.append(("checkpoint", "replication"))
    }
    return fields
  }
}
