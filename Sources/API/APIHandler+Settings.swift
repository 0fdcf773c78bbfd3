import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/settings` (PROTOCOL.md "Station settings"): applies the fields given (``RequestBody/settingsUpdate()``;
  /// a bad one is a 400 naming it, and nothing changes) in one transaction and answers the whole current set,
  /// every key present. A station that is not registered gets a 404.
  /// Only the owner of a claimed station gets here (`StationAccess.requireOwner`); a change is recorded in the
  /// station's audit trail under `client`.
  func settings(
    _ body: RequestBody, station: StationAddress, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let update = try body.settingsUpdate()
    let address = station.description
    let settings = try store { () throws(StoreError) in
      try database.updateStationSettings(address, update, client: client.key, now: now)
    }
    guard let settings else {
      throw .stationNotFound(address)
    }
    var writer = JSONWriter(
      capacity: 128 + (settings.blocked.calls.count + settings.quietBypass.calls.count) * 12)
    writer.beginObject()
    Self.writeSettings(settings, to: &writer)
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// The settings' keys, each present: `blocked` ([] when none), `mutedUntil` (0 when not muted), `quietHours`
  /// (null when none), `quietBypass`, `ackPolicy`, `keylessDevices`, `ssids` (`"exact"`, `"all"` or the sorted
  /// list of SSIDs), `ackSsids` (sorted, [] when none).
  static func writeSettings(_ settings: StationSettings, to writer: inout JSONWriter) {
    writer.key("blocked")
    writer.beginArray()
    for call in settings.blocked.calls { writer.string(call) }
    writer.endArray()
    writer.key("mutedUntil")
    writer.int(settings.mutedUntil)
    writer.key("quietHours")
    if let quiet = settings.quietHours {
      writer.beginObject()
      writer.key("start")
      writer.int(quiet.start)
      writer.key("end")
      writer.int(quiet.end)
      writer.key("utcOffsetMinutes")
      writer.int(quiet.utcOffsetMinutes)
      writer.endObject()
    } else {
      writer.null()
    }
    writer.key("quietBypass")
    writer.beginArray()
    for call in settings.quietBypass.calls { writer.string(call) }
    writer.endArray()
    writer.key("ackPolicy")
    writer.string(settings.ackPolicy.rawValue)
    writer.key("keylessDevices")
    writer.string(settings.keylessDevices.rawValue)
    writer.key("ssids")
    switch settings.ssids {
    case .exact: writer.string("exact")
    case .all: writer.string("all")
    case .list(let set):
      writer.beginArray()
      for ssid in set.ssids { writer.int(Int64(ssid)) }
      writer.endArray()
    }
    writer.key("ackSsids")
    writer.beginArray()
    for ssid in settings.ackSsids.ssids { writer.int(Int64(ssid)) }
    writer.endArray()
  }
}
