import APRS
import Store

extension MessageWriter {
  /// The watch events of `sightings` as entries to store, inside the caller's write transaction: each watch of
  /// the sender (those the index names, read with their states from the store) goes through
  /// ``WatchTracker/heard(_:rule:state:now:)``; the new state is written, each event becomes one entry.
  /// `now`: the wall clock (epoch ms; silences span restarts).
  func watchEntries(for sightings: [WatchSighting], now: Int64) throws(StoreError) -> [PlannedMessage] {
    var entries: [PlannedMessage] = []
    for sighting in sightings {
      let wanted = Set(sighting.watches.map { Self.watchKey($0.station, $0.subscription.id) })
      let call = StationAddress.canonical(sighting.report.source)
      for var watch in try database.watches(of: call, heardSince: 0, now: now)
      where wanted.contains(Self.watchKey(watch.station, watch.subscription)) {
        let (state, events) = WatchTracker.heard(
          sighting.report, rule: watch.rule, state: watch.state, now: now)
        watch.state = state
        try database.saveWatchState(watch)
        entries += events.map { Self.entry($0, of: watch, call: call, now: now) }
      }
    }
    return entries
  }

  /// The silences due at `now` (epoch ms) as entries, inside the caller's write transaction
  /// (``WatchTracker/tick(rule:state:now:)``); their states are written so each is reported once.
  func silenceEntries(now: Int64) throws(StoreError) -> [PlannedMessage] {
    var entries: [PlannedMessage] = []
    for var watch in try database.dueWatches(now: now) {
      let (state, events) = WatchTracker.tick(rule: watch.rule, state: watch.state, now: now)
      watch.state = state
      try database.saveWatchState(watch)
      entries += events.map { Self.entry($0, of: watch, call: watch.rule.call, now: now) }
    }
    return entries
  }

  /// One watch event as the entry stored for the watching station: the watched call as peer, the event's text,
  /// the report's position. Its key is unique (the state machine reports each event once).
  static func entry(_ event: WatchEvent, of watch: TrackedWatch, call: String, now: Int64) -> PlannedMessage {
    let name: WatchEventName
    switch event {
    case .heard: name = .heard
    case .silent: name = .silent
    case .emergency: name = .emergency
    }
    // Only a position on the globe is kept (the store refuses any other, and would refuse the batch).
    let position = event.report.flatMap { report -> (latitude: Double, longitude: Double)? in
      guard let latitude = report.latitude, let longitude = report.longitude, abs(latitude) <= 90,
        abs(longitude) <= 180
      else { return nil }
      return (latitude, longitude)
    }
    let separator = String(DedupKey.separator)
    return PlannedMessage(
      incoming: IncomingMessage(
        station: watch.station, peer: call, text: event.text, msgno: nil,
        dedupKey: LineRouter.subscriptionKeyPrefix + "watch" + separator + watch.subscription + separator
          + name.rawValue + separator + String(now),
        dedupWindowMs: 60_000,
        entry: SubscriptionEntry(
          kind: .watch, subscription: watch.subscription, event: name, latitude: position?.latitude,
          longitude: position?.longitude)),
      ack: nil)
  }

  private static func watchKey(_ station: String, _ subscription: String) -> String {
    station + String(DedupKey.separator) + subscription
  }
}
