import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/audit` (the owner only, with the station key): the station's audit trail, newest first, as
  /// `{"entries":[{"at":<ms>,"action":"settings","client":"2001:db8:1:2::/64","detail":"blocked, mutedUntil"},…]}`:
  /// claims, key rotations, releases, lapses, settings changes, ACK policy changes by register, whole-station
  /// unregisters and confirmed forward targets, each with the client address it came from (an IPv4 address, an
  /// IPv6 /64, or `operator` for the command line). At most ``Store/AuditEntry/keptPerStation`` entries, kept a
  /// year. Only the entries of the owner's own claim, from the one that made it (`claimed`, or `replaced` when it
  /// took the station back) on: an earlier holder's addresses are theirs, not the new owner's to read (the
  /// operator's `aprs-cloud stations CALL` prints them all).
  func audit(station: StationAddress) throws(APIError) -> APIResponse {
    let address = station.description
    let trail = try store { () throws(StoreError) in try database.auditTrail(of: address) }
    let start = trail.firstIndex { $0.action == .claimed || $0.action == .replaced }
    let entries = start.map { Array(trail[...$0]) } ?? trail
    var writer = JSONWriter(capacity: 32 + entries.count * 96)
    writer.beginObject()
    writer.key("entries")
    writer.beginArray()
    for entry in entries {
      writer.beginObject()
      writer.key("at")
      writer.int(entry.at)
      writer.key("action")
      writer.string(entry.action.rawValue)
      writer.key("client")
      writer.string(entry.client)
      writer.key("detail")
      writer.string(entry.detail)
      writer.endObject()
    }
    writer.endArray()
    writer.endObject()
    return .ok(writer, station: address)
  }
}
