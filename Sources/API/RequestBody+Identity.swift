import APRS

extension RequestBody {
  /// The caller's station from `callsign` and `ssid`, checked against `auth`.
  ///
  /// `callsign` is normalised to upper case; `callsign:"N0CALL-7"` without `ssid` means SSID 7.
  /// A malformed identity is a 400 naming the field; a passcode that does not match is a 401.
  func authenticatedStation() throws(APIError) -> StationAddress {
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
    guard try passcode() == Passcode.compute(station.base) else { throw .unauthorized }
    return station
  }
}
