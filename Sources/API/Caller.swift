import APRS
import Store

/// A station's request after its first step (``APIHandler/identify(_:)``): the body read, the station it names
/// with its passcode (or its key standing in), not banned.
struct Identity {
  /// The request's body.
  let body: RequestBody
  /// The station the body names (`callsign`, `ssid`), its passcode checked (or its station key standing in).
  let station: StationAddress
  /// The station key the request presented (`Authorization: Bearer` or `stationKey`), nil for none.
  let key: StationKey?
  /// The client's address, as the per-address and per-network limits count it.
  let client: ClientAddress
  /// The request's time, epoch ms.
  let now: Int64
}

/// Who sent a station's request, as the authorization step (``APIHandler/authorize(_:_:)``) found them: an
/// ``Identity`` (read as the caller's own: `caller.station`) and what the caller is to the station.
@dynamicMemberLookup
struct Caller {
  let identity: Identity
  /// The station's claim as stored: unregistered, unclaimed, claimed (and how far proven).
  let claimState: ClaimState
  /// What the key makes the caller: owner, guest, provisional claimant, or a caller of an unclaimed station.
  let access: StationAccess
  /// What the caller is to the station's devices: `access`, except that a provisional claim's key acts as no key
  /// (docs/design.md "Who may do what").
  let devices: StationAccess

  subscript<Value>(dynamicMember keyPath: KeyPath<Identity, Value>) -> Value { identity[keyPath: keyPath] }
}
