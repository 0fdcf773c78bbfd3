import APRS
import Store

extension MessageWriter {
  /// The entries of weather lines that continue an alert, inside the caller's write transaction: each line is
  /// stored for every station an entry of its alert (``WeatherAlertIdentity``: the same sender, the same first
  /// four characters of the `{` number) was stored for at most ``LineRouter/subscriptionWindowMs`` before
  /// `stampedAt`, or is about to be in this batch (`planned`), under that entry's subscription; never for the
  /// sender itself. `unmatched`: the lines that continue no alert stored here.
  func continuationEntries(
    for continuations: [WeatherContinuation], planned: [PlannedMessage], stampedAt: Int64
  ) throws(StoreError) -> (entries: [PlannedMessage], unmatched: Int) {
    var entries: [PlannedMessage] = []
    var unmatched = 0
    for continuation in continuations {
      let identity = continuation.identity
      var subscribers: [(station: String, subscription: String)] = []
      var seen = Set<String>()
      for message in planned {
        let incoming = message.incoming
        guard let entry = incoming.entry, entry.kind == .nws, incoming.peer == identity.sender,
          let msgno = incoming.msgno, msgno.hasPrefix(identity.sequence),
          seen.insert(incoming.station).inserted
        else { continue }
        subscribers.append((incoming.station, entry.subscription))
      }
      let since = stampedAt - LineRouter.subscriptionWindowMs
      for stored in try database.alertSubscribers(of: identity, since: since)
      where seen.insert(stored.station).inserted {
        subscribers.append(stored)
      }
      subscribers.removeAll { $0.station == continuation.entry.peer }
      if subscribers.isEmpty { unmatched += 1 }
      for (station, subscription) in subscribers {
        var incoming = continuation.entry
        incoming.station = station
        incoming.entry = SubscriptionEntry(kind: .nws, subscription: subscription)
        entries.append(PlannedMessage(incoming: incoming, ack: nil))
      }
    }
    return (entries, unmatched)
  }
}
