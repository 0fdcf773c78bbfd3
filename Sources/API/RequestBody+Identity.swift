import APRS

extension RequestBody {
  /// The caller's station from `callsign` and `ssid`, checked against `auth`.
  ///
  /// `callsign` is normalised to upper case; `callsign:"N0CALL-7"` without `ssid` means SSID 7.
  /// A malformed identity is a 400 naming the field; a passcode that does not match is a 401. With
  /// `keyStandsIn` (the request presents a station key) `auth` may be left out: the key proves more than the
  /// public passcode, and the caller then holds the request to the key (`StationAccess.decide`); an `auth`
  /// that is given must still match.
  func authenticatedStation(keyStandsIn: Bool = false) throws(APIError) -> StationAddress {
    let callsign = try requiredString("callsign", maxLength: 32)
    let ssid = try int("ssid", in: 0...15)
    let station: StationAddress
    do {
      station =
        if let ssid {
          try StationAddress(base: callsign, ssid: Int(ssid))
        } else {
          try StationAddress(parsing: callsign)
        }
    } catch {
      throw .badRequest("callsign: \(error)")
    }
    if keyStandsIn && !contains("auth") { return station }
    guard try passcode() == Passcode.compute(station.base) else { throw .unauthorized }
    return station
  }
}

extension RequestBody {
  /// The station key the request presents: `Authorization: Bearer <stationKey>` (the scheme in any case; other
  /// schemes, such as a proxy's Basic credentials, are not a station key) or a `stationKey` body field; nil when
  /// neither is there (an empty field counts as absent).
  /// - Throws: 400 when `stationKey` is not a string or the two name different keys; 401 when the text cannot be a
  ///   station key at all.
  func presentedStationKey(authorization: String?) throws(APIError) -> StationKey? {
    let field = try string("stationKey", maxLength: 256).flatMap { $0.isEmpty ? nil : $0 }
    var header: String?
    if let authorization {
      let parts = authorization.trimmingASCIISpaces().split(separator: " ", maxSplits: 1)
      if parts.count == 2, parts[0].lowercased() == "bearer" {
        header = String(parts[1]).trimmingASCIISpaces()
      }
    }
    if let field, let header, field != header {
      throw .badRequest("stationKey and the Authorization header name different keys; send one of them")
    }
    guard let text = field ?? header else { return nil }
    guard let key = StationKey(presented: text) else {
      throw .wrongStationKey(
        "stationKey is not a station key (\(StationKey.textLength) base64url characters from POST /v1/claim)")
    }
    return key
  }
}
