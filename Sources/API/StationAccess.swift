import Store

/// Who the caller is to the station it names (docs/protocol.md "Owned stations"), decided once per request from the
/// station's claim and the station key the request presents (``RequestBody/presentedStationKey(authorization:)``).
enum StationAccess: Sendable, Equatable {
  /// Nobody owns the station (or it is not registered): the old protocol's rules, and no settings or sending
  /// until it is claimed.
  case unclaimed
  /// The station is claimed and the request proved its key; the claim governs the station (proven, or unproven
  /// from before claims were proven).
  case owner(StationClaim)
  /// The request proved the key of a claim that waits for its proof (docs/design.md "Who may do what"): the
  /// station's own provisional claim, or a request to take the station back. Its devices work as keyless ones
  /// do; it may prove, ask for new codes or give the claim up, and changes nothing for the station's other devices.
  case provisional(keyHash: String)
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

  /// Decides the access of a request that presents `key` (nil: none) to a station in `state`. `pending` is the
  /// request of that key waiting for its proof, if there is one (``Store/Database/claimRequest(_:keyHash:)``).
  /// Without a key, a station whose claim is provisional is unclaimed to the caller: a claim nobody proved changes
  /// nothing for the station's devices.
  /// - Throws: `APIError.wrongStationKey` (401) when a key is presented and is neither the claim's nor a waiting
  ///   request's: the station is not claimed (any more), the key was rotated, or a proven claim took the station
  ///   back from it (said so).
  static func decide(_ state: ClaimState, key: StationKey?, station: String, pending: ClaimRequest? = nil)
    throws(APIError) -> StationAccess
  {
    guard let key else {
      guard let claim = state.claim, claim.proof.governs else { return .unclaimed }
      return .guest
    }
    if let claim = state.claim, key.matches(claim.keyHash) {
      return claim.proof.governs ? .owner(claim) : .provisional(keyHash: claim.keyHash)
    }
    if let pending, key.matches(pending.keyHash) { return .provisional(keyHash: pending.keyHash) }
    guard let claim = state.claim else {
      throw .wrongStationKey(
        "\(station) is not claimed, so no stationKey is valid for it (a claim that is released or lapses takes its"
          + " key with it); claim it with POST /v1/claim")
    }
    if let replaced = claim.replacedKeyHash, key.matches(replaced) {
      throw .wrongStationKey(
        "\(station) was taken back from this key's claim: a device the station had before it proved another claim"
          + " with a code pushed to it; this key no longer works")
    }
    throw .wrongStationKey("stationKey is not the key of \(station)'s claim (it may have been rotated)")
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
    case .provisional:
      throw .forbidden(
        "this key's claim of \(station) is provisional: \(what) needs a proven claim. Enter the code pushed to the"
          + " station's other devices (POST /v1/claim with code), or ask the server's operator to approve it")
    }
  }
}
