import Store

/// Who the caller is to the station it names (PROTOCOL.md "Owned stations"), decided once per request from the
/// station's claim and the station key the request presents (``RequestBody/presentedStationKey(authorization:)``).
enum StationAccess: Sendable, Equatable {
  /// Nobody owns the station (or it is not registered): the old protocol's rules, and no settings or sending
  /// until it is claimed.
  case unclaimed
  /// The station is claimed and the request proved its key.
  case owner(StationClaim)
  /// The station is claimed and the request presented no key: what the shipping app does keeps working; what
  /// harms the station does not.
  case guest

  /// Whether the request proved the key.
  var isOwner: Bool {
    if case .owner = self { return true }
    return false
  }

  /// Whether the station is claimed (by the caller or someone else).
  var isClaimed: Bool { self != .unclaimed }

  /// Decides the access of a request that presents `key` (nil: none) to a station in `state`.
  /// - Throws: `APIError.wrongStationKey` (401) when a key is presented and is not the claim's: the station is
  ///   not claimed (any more), or the key is not its key.
  static func decide(_ state: ClaimState, key: StationKey?, station: String) throws(APIError) -> StationAccess
  {
    guard let key else { return state.claim == nil ? .unclaimed : .guest }
    guard let claim = state.claim else {
      throw .wrongStationKey(
        "\(station) is not claimed, so no stationKey is valid for it (a claim that is released or lapses takes its"
          + " key with it); claim it with POST /v1/claim")
    }
    guard key.matches(claim.keyHash) else {
      throw .wrongStationKey("stationKey is not the key of \(station)'s claim (it may have been rotated)")
    }
    return .owner(claim)
  }

  /// Refuses the request unless the caller owns the station: `what` is what it wanted (`changing settings`).
  /// - Throws: `APIError.forbidden` (403): on an unclaimed station naming `POST /v1/claim`, on a claimed one saying
  ///   that it is claimed and needs its key.
  func requireOwner(_ station: String, for what: String) throws(APIError) {
    switch self {
    case .owner: return
    case .unclaimed:
      throw .forbidden(
        "\(what) needs a claimed station: claim \(station) first with POST /v1/claim and send its stationKey")
    case .guest:
      throw .forbidden(
        "\(station) is claimed: \(what) needs its station key (Authorization: Bearer <stationKey> or a"
          + " stationKey field)")
    }
  }
}
