import Logging
import Store

/// A coalesced batch split by the station's settings at the moment its push would go out.
///
/// A claim governs only the devices it brought or adopted (docs/design.md "Who may do what"; ``ClaimReach``): its
/// mute, quiet hours and blocked calls hold the pushes of those devices only. A keyless device registered before
/// the claim gets every message as it would without the claim (``guestEntries``); only subscription entries,
/// which exist because the owner subscribed, follow the owner's holds for every device.
struct QuietSplit: Equatable {
  /// What the keyed devices may still be pushed (nil when nothing may).
  var batch: PushBatch?
  /// Entries held back from the keyed devices: their messages stay stored for sync, and no keyed device is ever
  /// pushed for them (the next push after the window counts them, as `count` counts what the station has not
  /// pulled).
  var held: [OutboxEntry] = []
  /// What the devices the claim does not govern are pushed: every message, and the subscription entries the
  /// holds let through.
  var guestEntries: [OutboxEntry] = []
  /// Whom the station's claim governs; nil when no claim governs it (its settings then hold every device).
  var reach: ClaimReach?

  /// Whether the holds apply to `device`.
  func governs(_ device: DeviceRecord) -> Bool { reach?.governs(device) ?? true }
  /// Why the first held entry was held.
  var reason: PushHold?
  /// What the station pushes for a message its own radio answered (`airAnswered`): ``Store/AirAnswered/quiet`` makes
  /// such a push low priority without sound (``PushAudience/priority(of:airAnswered:)``).
  var airAnswered: AirAnswered = .quiet

  /// Splits `batch` by `settings` at `now` (epoch ms), pure: while muted every message is held; inside the quiet
  /// hours every message but those from `quietBypass` senders. A subscription entry is held by both unless its
  /// subscription is in `bypassing` (the ids of the station's subscriptions with `bypass:true`: pushed through
  /// quiet hours and mute); an urgent one (a watched station's emergency) goes through quiet hours, not a mute
  /// (``hold(_:settings:bypassing:now:)``). A batch that was coalescing when the window opened is held like one
  /// that arrived inside it: the decision is made here, when the push would be sent.
  static func split(
    _ batch: PushBatch, settings: StationSettings, bypassing: Set<String> = [], now: Int64
  ) -> QuietSplit {
    var split = QuietSplit()
    split.airAnswered = settings.airAnswered
    var kept: [OutboxEntry] = []
    for entry in batch.entries {
      let hold =
        if let subscription = entry.message.entry {
          Self.hold(subscription, settings: settings, bypassing: bypassing, now: now)
        } else {
          settings.pushHold(from: entry.message.peer, now: now)
        }
      if let hold {
        split.held.append(entry)
        if split.reason == nil { split.reason = hold }
      } else {
        kept.append(entry)
      }
      if hold == nil || entry.message.entry == nil { split.guestEntries.append(entry) }
    }
    if !kept.isEmpty { split.batch = PushBatch(station: batch.station, entries: kept) }
    return split
  }

  /// Why the push of a subscription entry must not go out at `now`, or nil when it may: never for a subscription
  /// in `bypassing`; a mute holds every other one; quiet hours every other one but an urgent entry. A message
  /// sender's `quietBypass` does not apply: a subscription says for itself whether it bypasses.
  static func hold(
    _ entry: SubscriptionEntry, settings: StationSettings, bypassing: Set<String>, now: Int64
  ) -> PushHold? {
    if bypassing.contains(entry.subscription) { return nil }
    if settings.mutedUntil > now { return .muted }
    if !entry.isUrgent, let quietHours = settings.quietHours, quietHours.contains(now) { return .quietHours }
    return nil
  }
}

extension PushEngine {
  /// The station's mute and quiet hours applied to a batch about to become provider jobs: reads its settings
  /// and whom its claim governs (a station without settings, or a failed read, pushes as usual) and splits the
  /// batch (``QuietSplit``).
  func quietSplit(_ batch: PushBatch, now: Int64) -> QuietSplit {
    let settings: StationSettings?
    let reach: ClaimReach?
    do throws(StoreError) {
      settings = try database.stationSettings(batch.station)
      reach = settings == nil ? nil : try database.claimReach(batch.station)
    } catch {
      options.logger.warn(
        "push: cannot read the station's settings; pushing as usual",
        ["station": batch.station, "error": error.description])
      return QuietSplit(batch: batch, guestEntries: batch.entries)
    }
    guard let settings else { return QuietSplit(batch: batch, guestEntries: batch.entries) }
    var split = QuietSplit.split(
      batch, settings: settings, bypassing: bypassingSubscriptions(of: batch), now: now)
    split.reach = reach
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

  /// The ids of the station's subscriptions with `bypass:true`, read only when `batch` holds subscription
  /// entries; a failed read bypasses nothing (the station's quiet hours and mute hold as set).
  private func bypassingSubscriptions(of batch: PushBatch) -> Set<String> {
    guard batch.entries.contains(where: { $0.message.entry != nil }) else { return [] }
    do throws(StoreError) {
      return Set(try database.subscriptions(of: batch.station).filter(\.bypass).map(\.id))
    } catch {
      options.logger.warn(
        "push: cannot read the station's subscriptions; none bypasses quiet hours or mute",
        ["station": batch.station, "error": error.description])
      return []
    }
  }
}
