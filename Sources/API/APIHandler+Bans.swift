import APRS
import Store

extension APIHandler {
  /// The operator's bans (`aprs-cloud ban`): a request from a banned address block, or for a station whose call
  /// is banned, gets 403 on every `/v1` call but `/v1/info` (answered before this), and changes nothing. One
  /// small query per request (the table holds a handful of rows).
  /// - Throws: ``APIError/forbidden(_:)`` naming what is banned; 503/500 when the database fails.
  func refuseBanned(station: StationAddress, client: ClientAddress, now: Int64) throws(APIError) {
    let bans = try store { () throws(StoreError) in try database.activeBans(now: now) }
    guard !bans.isEmpty else { return }
    if let bytes = client.bytes, let block = bans.block(holding: bytes) {
      throw .forbidden("requests from \(block) are banned on this server")
    }
    if bans.bans(sender: station.description) {
      throw .forbidden("the station \(station) is banned on this server")
    }
  }
}
