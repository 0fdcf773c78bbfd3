import APRS
import Synchronization

/// What the router needs to know about the registered stations (``LineRouter``).
protocol ServedStations {
  /// Whether `address` (upper case, exact SSID) is a live registered station.
  func serves(_ address: String) -> Bool
  /// Whether a message to `address` may earn an ACK: false when the station is known not to want them; true
  /// when it does, or when the caller confirms it later (``MessageWriter`` looks the ACK policy up in its write
  /// transaction).
  func mayAck(_ address: String) -> Bool
  /// The served stations that collect messages to `address` (upper case, as parsed; `CALL-0` is `CALL`) as
  /// another SSID of their call (setting `ssids`); empty for nearly every address, without allocating.
  func collectors(of address: String) -> [SSIDCollector]
  /// The live stations' subscriptions (read once per batch).
  var subscriptionIndex: SubscriptionIndex { get }
  /// The stations whose own transmissions the filter follows (read once per batch).
  var ownTransmissions: OwnTransmissions { get }
}

extension LiveStationSet: ServedStations {
  func serves(_ address: String) -> Bool { contains(address) }
  func mayAck(_ address: String) -> Bool { ackMessages[address] == true }
  func collectors(of address: String) -> [SSIDCollector] { coverage.collectors(of: address) }
  var subscriptionIndex: SubscriptionIndex { subscriptions }
  var ownTransmissions: OwnTransmissions { own }
}

/// The live registered stations the listener serves, shared by the registration watcher (the only thread that
/// changes them) and the writer (which asks whether an addressee is one, for each message).
///
/// The stations live in a ``FilterPlanner`` (its prefix tries: about 11 bytes per station and per part, no heap
/// object per station) behind a lock, so the same structure answers membership and plans the `#filter` line:
/// nothing holds a `String` per station. Whether a station wants ACKs is not kept here: the writer reads it from
/// the database for the few stations of each batch.
final class StationRegistry: Sendable, ServedStations {
  private let planner: Mutex<FilterPlanner>
  /// The stations that collect other SSIDs of their call (few), apart from the tries.
  private let coverage = Mutex(SSIDCoverage.empty)
  /// The live stations' subscriptions.
  private let subscriptions = Mutex(SubscriptionIndex.empty)
  private let unwatched = Mutex<[String]>([])
  /// The stations that asked to have their own transmissions followed, and what the last plan made of them.
  private let own = Mutex(OwnTransmissions.empty)

  /// A registry holding what `planner` holds.
  init(_ planner: FilterPlanner = FilterPlanner()) {
    self.planner = Mutex(planner)
  }

  /// Replaces every station (a full load).
  func replace(with planner: FilterPlanner) {
    self.planner.withLock { $0 = planner }
  }

  /// Changes the stations under the lock (a batch of the watcher's changes).
  func update<Result: Sendable>(_ body: (inout FilterPlanner) -> Result) -> Result {
    planner.withLock { body(&$0) }
  }

  /// The `#filter` line for the stations now, at most ``FilterPlanner/answerableLineLength`` (504) bytes with
  /// CR LF: its `# filter … active` answer must fit the 512 bytes the connection reads per line. Planned on a copy
  /// outside the lock (the copy shares the stations' storage until the next change), so the writer never waits.
  /// The `g/` entries for the SSIDs stations collect besides their own (``SSIDCoverage/filterEntries(budget:)``)
  /// come first, within ``FilterPlanner/maximumExtraBytes(maximumLineLength:)``.
  /// The subscriptions' entries (``SubscriptionIndex/filterEntries(budget:)``) take what the SSIDs leave of it.
  func plan() -> FilterLine {
    let snapshot = planner.withLock { $0 }
    let length = FilterPlanner.answerableLineLength
    let budget = FilterPlanner.maximumExtraBytes(maximumLineLength: length)
    let ssidEntries = coverage.withLock { $0.filterEntries(budget: budget) }
    let wanted = subscriptions.withLock {
      $0.filterEntries(budget: budget - FilterEntryFit.bytes(ssidEntries))
    }
    unwatched.withLock { $0 = wanted.unwatched }
    let requests = own.withLock { $0.requests }
    let line = snapshot.plan(
      maximumLineLength: length, extraAddressees: ssidEntries + wanted.addressees,
      extraSenders: wanted.senders, ownTransmissions: requests)
    own.withLock { $0.planned(line.ownTransmissions) }
    return line
  }

  /// Replaces the stations that asked to have their own transmissions followed (what the last plan followed of
  /// them stays until the next ``plan()``); true when what they ask changed.
  @discardableResult
  func replaceOwnTransmissions(with new: OwnTransmissions) -> Bool {
    own.withLock { current in
      guard !current.asks(like: new) else { return false }
      var replaced = new
      replaced.planned(OwnTransmissionPlan(followed: current.followed.sorted(), fellBack: current.fellBack))
      current = replaced
      return true
    }
  }

  var ownTransmissions: OwnTransmissions { own.withLock { $0 } }

  /// The watched calls the last ``plan()`` left off the line (``Subscription`` watches whose `b/` entry did not
  /// fit: never widened), most watched first.
  var unwatchedCalls: [String] { unwatched.withLock { $0 } }

  /// Replaces the subscriptions; true when that changed them.
  @discardableResult
  func replaceSubscriptions(with new: SubscriptionIndex) -> Bool {
    subscriptions.withLock { current in
      guard current != new else { return false }
      current = new
      return true
    }
  }

  var subscriptionIndex: SubscriptionIndex { subscriptions.withLock { $0 } }

  /// Replaces the stations that collect other SSIDs; true when that changed anything.
  @discardableResult
  func replaceCoverage(with new: SSIDCoverage) -> Bool {
    coverage.withLock { current in
      guard current != new else { return false }
      current = new
      return true
    }
  }

  /// The stations that collect other SSIDs of their call (setting `ssids`), for the log.
  var collectingCount: Int { coverage.withLock { $0.stationCount } }

  func collectors(of address: String) -> [SSIDCollector] {
    coverage.withLock { $0.collectors(of: address) }
  }

  /// The stations served (the `g/` part).
  var count: Int { planner.withLock { $0.count(of: .addressees) } }

  func serves(_ address: String) -> Bool {
    planner.withLock { $0.contains(address: address) }
  }

  /// Always true: the writer confirms the station's ACK policy in its transaction.
  func mayAck(_ address: String) -> Bool { true }
}
