import Store

extension APIHandler {
  /// One width a request is counted at (a new station, a claim): a client's own address, its network, its wide
  /// network.
  struct AddressWidthCap {
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
  func newStationCaps(for client: ClientAddress) -> [AddressWidthCap] {
    var caps = [
      AddressWidthCap(
        name: .newStationsPerAddressPerHour,
        count: RateCount(
          key: RateKey.newStationsFromAddress + client.key, limit: config.newStationsPerAddressPerHour),
        what: "new stations from this address")
    ]
    if let network = client.network {
      caps.append(
        AddressWidthCap(
          name: .newStationsPerNetworkPerHour,
          count: RateCount(
            key: RateKey.newStationsFromNetwork + network.description,
            limit: config.newStationsPerNetworkPerHour),
          what: "new stations from this network (\(network))"))
    }
    if let wide = client.wideNetwork {
      caps.append(
        AddressWidthCap(
          name: .newStationsPerWideNetworkPerHour,
          count: RateCount(
            key: RateKey.newStationsFromWideNetwork + wide.description,
            limit: config.newStationsPerWideNetworkPerHour),
          what: "new stations from this network (\(wide))"))
    }
    return caps
  }

  /// The widths a claim from `client` is counted at: its address (`claimsPerAddressPerHour`) and its IPv4 /24 or
  /// IPv6 /48 (`claimsPerNetworkPerHour`). Claims are what a squatter would take in bulk (every station the
  /// shipping app registered is unclaimed), so they are counted apart from new stations.
  func claimCaps(for client: ClientAddress) -> [AddressWidthCap] {
    var caps = [
      AddressWidthCap(
        name: .claimsPerAddressPerHour,
        count: RateCount(key: RateKey.claimsFromAddress + client.key, limit: config.claimsPerAddressPerHour),
        what: "claims from this address")
    ]
    if let network = client.network {
      caps.append(
        AddressWidthCap(
          name: .claimsPerNetworkPerHour,
          count: RateCount(
            key: RateKey.claimsFromNetwork + network.description, limit: config.claimsPerNetworkPerHour),
          what: "claims from this network (\(network))"))
    }
    return caps
  }

  /// Counts a claim (or a rotation) from `client` at both widths in one step, as ``admitNewStation(from:now:)``
  /// counts a new station.
  /// - Throws: `APIError.rateLimited` (429 with `Retry-After`) past either.
  func admitClaim(from client: ClientAddress, now: Int64) throws(APIError) {
    let caps = claimCaps(for: client)
    let refusal = try store { () throws(StoreError) -> (what: String, retryAfterMs: Int64)? in
      try database.writeBatch { () throws(StoreError) -> (what: String, retryAfterMs: Int64)? in
        try admit(caps, now: now)
      }
    }
    if let refusal {
      throw .rateLimited(what: refusal.what, retryAfterSeconds: Self.seconds(refusal.retryAfterMs))
    }
  }

  /// Counts a new station from `client` at every width in ONE step (inside the caller's `writeBatch`):
  /// nil when it fits all of them (counted at each), else what to say and when to retry. A refused
  /// station is counted at no width (a /48's cap does not use up its /64's), and each limit it is over
  /// counts one hit; the 429 names the widest of them and waits for the last window to reopen (only
  /// then does the station fit them all).
  func admitNewStation(from client: ClientAddress, now: Int64) throws(StoreError)
    -> (what: String, retryAfterMs: Int64)?
  {
    try admit(newStationCaps(for: client), now: now)
  }

  /// Counts one request at every width of `caps` at once (the caller holds the write transaction): nil when it
  /// fits them all, else the widest refusal's text and the wait until it fits every one; each limit it is over
  /// counts one hit.
  private func admit(_ caps: [AddressWidthCap], now: Int64) throws(StoreError) -> (
    what: String, retryAfterMs: Int64
  )? {
    let refusals = try database.consumeRates(caps.map(\.count), windowMs: Self.rateWindowMs, now: now)
    guard let widest = refusals.last else { return nil }
    for refusal in refusals { try database.countLimitHit(caps[refusal.index].name) }
    return (caps[widest.index].what, refusals.map(\.retryAfterMs).max() ?? widest.retryAfterMs)
  }
}
