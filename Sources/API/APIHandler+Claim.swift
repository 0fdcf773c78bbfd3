import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/claim` `{callsign, ssid, auth, rotate?}` (PROTOCOL.md "Owned stations"): claims an unclaimed station
  /// (registering it first if needed, under the same limits as a register) and answers
  /// `{"stationKey":"<43 base64url characters>","claimedAt":<ms>}`, once: a claimed station is a 409. With
  /// `rotate:true` and the station's key, answers a new key (the old one stops working at once) and the original
  /// `claimedAt`; without the key a 403. Claims and rotations go to the station's audit trail under `client`.
  func claim(
    _ body: RequestBody, station: StationAddress, key: StationKey?, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let address = station.description
    let rotate = try body.bool("rotate") ?? false
    let release = try body.bool("release") ?? false
    if release {
      guard !rotate else { throw .badRequest("rotate and release cannot go together") }
      return try releaseOwnClaim(station: station, key: key, client: client, now: now)
    }
    let newKey = StationKey.generate()
    let claimedAt: Int64
    if rotate {
      let state = try store { () throws(StoreError) in try database.stationClaim(address) }
      let access = try StationAccess.decide(state, key: key, station: address)
      try access.requireOwner(address, for: "rotating the station key")
      guard case .owner(let claim) = access else { throw .internalError("the claim vanished") }
      try admitClaim(from: client, now: now)
      let rotated = try store { () throws(StoreError) in
        try database.rotateStationKey(
          address, from: claim.keyHash, to: newKey.hash, client: client.key, now: now)
      }
      guard rotated else { throw .conflict("the claim of \(address) changed meanwhile; try again") }
      claimedAt = claim.claimedAt
    } else {
      // A claim proves the passcode: a key (of a claim that lapsed) stands in for nothing here.
      guard body.contains("auth") else { throw .unauthorized }
      if case .claimed(let claim) = try store({ () throws(StoreError) in try database.stationClaim(address) })
      {
        throw Self.alreadyClaimed(address, since: claim.claimedAt)
      }
      try admitClaim(from: client, now: now)
      // Registers the station when it is not stored yet, through a register's limits and caps.
      _ = try refresh(
        station, device: DeviceFields(platform: nil, pushToken: nil), ackMessages: nil, isRegistration: true,
        avatar: .none, access: .unclaimed, client: client, now: now)
      let outcome = try store { () throws(StoreError) in
        try database.claimStation(address, keyHash: newKey.hash, client: client.key, now: now)
      }
      switch outcome {
      case .claimed(let at): claimedAt = at
      case .alreadyClaimed: throw Self.alreadyClaimed(address, since: nil)
      case .unregistered: throw .conflict("\(address) was unregistered meanwhile; claim it again")
      }
    }
    var writer = JSONWriter(capacity: 96)
    writer.beginObject()
    writer.key("stationKey")
    writer.string(newKey.text)
    writer.key("claimedAt")
    writer.int(claimedAt)
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// `{release:true}` with the key: the owner gives the claim up (the station, its devices and settings stay;
  /// anyone may claim it again). Answers `{"released":true}`; recorded in the audit trail under `client`. The web
  /// client does this at "Sign out", where it would otherwise lose the only copy of the key.
  private func releaseOwnClaim(
    station: StationAddress, key: StationKey?, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let address = station.description
    let state = try store { () throws(StoreError) in try database.stationClaim(address) }
    let access = try StationAccess.decide(state, key: key, station: address)
    try access.requireOwner(address, for: "releasing the claim")
    let released = try store { () throws(StoreError) in
      try database.releaseClaim(address, client: client.key, now: now)
    }
    guard released else { throw .conflict("the claim of \(address) changed meanwhile") }
    var writer = JSONWriter(capacity: 24)
    writer.beginObject()
    writer.key("released")
    writer.bool(true)
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// The 409 of a claim of a claimed station.
  private static func alreadyClaimed(_ address: String, since: Int64?) -> APIError {
    .conflict(
      "\(address) is claimed already\(since.map { " (since \($0) ms)" } ?? ""): only the device holding its"
        + " station key can change it; the server's operator can release the claim")
  }
}
