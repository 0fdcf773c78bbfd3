import Store

extension APIHandler {
  /// One width a new station is counted at: a client's own address, its network, its wide network.
  struct NewStationCap {
    /// The limit, as `/metrics` names its hits.
    var name: LimitName
    /// The count under its key (`rate_limits`) and its setting per hour.
    var count: RateCount
    /// What the 429 says is creating too many (`new stations from this network (2001:db8:1::/48)`).
    var what: String
  }

  /// The widths a new station from `client` is counted at, narrowest first: its address
  /// (`newStationsPerAddressPerHour`), its IPv4 /24 or IPv6 /48 (`newStationsPerNetworkPerHour`) and its
  /// IPv6 /32 (`newStationsPerWideNetworkPerHour`); `unknown` only at the first (it has no network).
  func newStationCaps(for client: ClientAddress) -> [NewStationCap] {
    var caps = [
      NewStationCap(
        name: .newStationsPerAddressPerHour,
        count: RateCount(key: "new stations from:\(client.key)", limit: config.newStationsPerAddressPerHour),
        what: "new stations from this address")
    ]
    if let network = client.network {
      caps.append(
        NewStationCap(
          name: .newStationsPerNetworkPerHour,
          count: RateCount(
            key: "new stations from network:\(network)", limit: config.newStationsPerNetworkPerHour),
          what: "new stations from this network (\(network))"))
    }
    if let wide = client.wideNetwork {
      caps.append(
        NewStationCap(
          name: .newStationsPerWideNetworkPerHour,
          count: RateCount(
            key: "new stations from wide network:\(wide)", limit: config.newStationsPerWideNetworkPerHour),
          what: "new stations from this network (\(wide))"))
    }
    return caps
  }

  /// Counts a new station from `client` at every width in ONE step (inside the caller's `writeBatch`):
  /// nil when it fits all of them (counted at each), else what to say and when to retry. A refused
  /// station is counted at no width (a /48's cap does not use up its /64's), and each limit it is over
  /// counts one hit; the 429 names the widest of them and waits for the last window to reopen (only
  /// then does the station fit them all).
  func admitNewStation(from client: ClientAddress, now: Int64) throws(StoreError)
    -> (what: String, retryAfterMs: Int64)?
  {
    let caps = newStationCaps(for: client)
    let refusals = try database.consumeRates(caps.map(\.count), windowMs: Self.rateWindowMs, now: now)
    guard let widest = refusals.last else { return nil }
    for refusal in refusals { try database.countLimitHit(caps[refusal.index].name) }
    return (caps[widest.index].what, refusals.map(\.retryAfterMs).max() ?? widest.retryAfterMs)
  }
}
