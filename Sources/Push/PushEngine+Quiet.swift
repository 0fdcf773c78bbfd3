import Logging
import Store

/// A coalesced batch split by the station's settings at the moment its push would go out.
struct QuietSplit: Equatable {
  /// What may still be pushed (nil when nothing may).
  var batch: PushBatch?
  /// Entries held back: their messages stay stored for sync, and no push is ever sent for them (the next push
  /// after the window counts them, as `count` counts what the station has not pulled).
  var held: [OutboxEntry] = []
  /// Why the first held entry was held.
  var reason: PushHold?

  /// Splits `batch` by `settings` at `now` (epoch ms), pure: while muted every entry is held; inside the quiet
  /// hours every entry but those from `quietBypass` senders. A batch that was coalescing when the window opened
  /// is held like one that arrived inside it: the decision is made here, when the push would be sent.
  static func split(_ batch: PushBatch, settings: StationSettings, now: Int64) -> QuietSplit {
    var split = QuietSplit()
    var kept: [OutboxEntry] = []
    for entry in batch.entries {
      if let hold = settings.pushHold(from: entry.message.peer, now: now) {
        split.held.append(entry)
        if split.reason == nil { split.reason = hold }
      } else {
        kept.append(entry)
      }
    }
    if !kept.isEmpty { split.batch = PushBatch(station: batch.station, entries: kept) }
    return split
  }
}

extension PushEngine {
  /// The station's mute and quiet hours applied to a batch about to become provider jobs: reads its settings
  /// (a station without any, or a failed read, pushes as usual) and splits the batch (``QuietSplit``).
  func quietSplit(_ batch: PushBatch, now: Int64) -> QuietSplit {
    let settings: StationSettings?
    do throws(StoreError) {
      settings = try database.stationSettings(batch.station)
    } catch {
      options.logger.warn(
        "push: cannot read the station's settings; pushing as usual",
        ["station": batch.station, "error": error.description])
      return QuietSplit(batch: batch)
    }
    guard let settings else { return QuietSplit(batch: batch) }
    let split = QuietSplit.split(batch, settings: settings, now: now)
    if let reason = split.reason, options.logger.isEnabled(.debug) {
      options.logger.log(
        .debug, "push held: the station is quiet",
        fields: [
          ("station", batch.station), ("reason", reason.rawValue), ("held", String(split.held.count)),
          ("pushed", String(split.batch?.entries.count ?? 0)),
        ])
    }
    return split
  }
}
