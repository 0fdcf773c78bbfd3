import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/export` (docs/protocol.md "Owned stations"; the owner only, with the station key): every stored entry
  /// of the station (received and sent messages with their states, the entries of other SSIDs and of
  /// subscriptions), its read markers, settings and claim, as one JSON document in timestamp order
  /// (``Store/StationArchive/jsonDocument(exportedAt:)``), offered as a download
  /// (`Content-Disposition: attachment; filename="aprs-cloud-N0CALL-7.json"`). `aprs-cloud import` reads it into
  /// another server. A station that is not registered is a 404.
  func export(station: StationAddress, now: Int64) throws(APIError) -> APIResponse {
    let address = station.description
    guard let archive = try store({ () throws(StoreError) in try database.exportStation(address) }) else {
      throw .stationNotFound(address)
    }
    return APIResponse(
      status: 200,
      headers: [("Content-Disposition", #"attachment; filename="aprs-cloud-\#(address).json""#)],
      body: archive.jsonDocument(exportedAt: now), station: address)
  }
}
