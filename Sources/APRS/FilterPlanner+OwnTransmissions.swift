extension FilterPlanner {
  /// A station that asks to follow its own transmissions, and since when it asks (any clock, e.g. the epoch ms of
  /// the settings change; only the order matters): the oldest request has precedence for the line's bytes.
  public struct OwnTransmissionRequest: Hashable, Sendable {
    /// The station.
    public let station: StationAddress
    /// When it asked.
    public let since: Int64

    /// A request of `station` made at `since`.
    public init(station: StationAddress, since: Int64) {
      self.station = station
      self.since = since
    }
  }

  /// The `b/` entries that let the requesting stations' own packets through, within `room` bytes (Σ entry + 1), and
  /// whom they follow.
  ///
  /// - A station already covered by the `b/` part (outgoing tracking holds it in ``Part/senders``: it has an exact
  ///   entry or a prefix there; or `extraSenders` name it) is followed for nothing.
  /// - The others get exact entries, never a prefix (a `b/` prefix passes every packet of every matching sender:
  ///   toward the whole feed): `CALL-SSID`, and a bare call `CALL` with `CALL-0` beside it as everywhere on the line
  ///   (APRS names the station either way and aprsc's `b/` matches exactly). aprsc takes any number of calls in one
  ///   `b/` part (`b/CALL1/CALL2/…`: `filter_parse_one_callsignset` counts and keeps them all), so they join the
  ///   one `b/` part: the cost of a station is its entries and their `/`s, 9 bytes for `KJ7ABC-15` … `N0CALL-7`.
  /// - Precedence: the oldest request first, ties by address (so the same requests give the same line, whatever
  ///   their order); each is taken if it fits what the earlier ones left (a later, shorter one may still fit).
  ///   Those that do not fit fell back.
  func ownTransmissionEntries(
    _ requests: [OwnTransmissionRequest], extraSenders: [String], room: Int
  ) -> (entries: [String], plan: OwnTransmissionPlan) {
    guard !requests.isEmpty else { return ([], .none) }
    var ranked: [OwnTransmissionRequest] = []
    var seen = Set<StationAddress>()
    for request in requests.sorted(by: {
      ($0.since, $0.station.description) < ($1.since, $1.station.description)
    }) where seen.insert(request.station).inserted {
      ranked.append(request)
    }
    var present = Set(extraSenders)
    var entries: [String] = []
    var followed: [String] = []
    var fellBack: [String] = []
    var used = 0
    for request in ranked {
      let station = request.station
      let address = station.description
      if contains(station, in: .senders) {
        followed.append(address)
        continue
      }
      var wanted = [address]
      if let alias = PackedCall.zeroSSIDAlias(PackedCall.pack(station)) {
        wanted.append(PackedCall.string(alias))
      }
      let missing = wanted.filter { !present.contains($0) }
      let cost = FilterEntryFit.bytes(missing)
      guard used + cost <= room else {
        fellBack.append(address)
        continue
      }
      used += cost
      entries += missing
      present.formUnion(missing)
      followed.append(address)
    }
    return (entries, OwnTransmissionPlan(followed: followed.sorted(), fellBack: fellBack))
  }
}
