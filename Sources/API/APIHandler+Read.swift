import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/read {peer, upTo}` (docs/protocol.md "Opt-in answers", `want:["inbox"]`): the station has read its
  /// conversation with `peer` (a station address, or `"*"` for all) up to the message timestamp `upTo`; every
  /// device sees it in its next sync or long poll with `want:["inbox"]` (`read`), and the station's held long
  /// polls are answered at once. A marker never moves back, nor past the newest timestamp the server gave. Answers
  /// `{"peer","upTo","serverTime"}`: the marker as it stands, and the cursor the change is stamped at (the newest
  /// when nothing changed). A claimed station needs its key.
  func read(_ body: RequestBody, station: StationAddress, now: Int64) throws(APIError) -> APIResponse {
    guard let peerText = try body.string("peer", maxLength: 16) else {
      throw .badRequest(#"peer is required: a station address, or "*" for every conversation"#)
    }
    let peer: String
    if peerText == Database.everyPeer {
      peer = peerText
    } else {
      do throws(CallsignError) {
        peer = try StationAddress(parsing: peerText).description
      } catch {
        throw .badRequest(#"peer must be a station address (CALL or CALL-SSID) or "*""#)
      }
    }
    guard let upTo = try body.int("upTo", in: 0...Int64(9_007_199_254_740_991)) else {
      throw .badRequest("upTo is required: the timestamp of the newest message read (epoch ms)")
    }
    let (marker, stamp) = try store { () throws(StoreError) -> (Int64, Int64) in
      let mark = try database.markRead(station: station.description, peer: peer, upTo: upTo, now: now)
      if let mark, let stamp = mark.stamp { return (mark.upTo, stamp) }
      return (mark?.upTo ?? upTo, try database.messageActivity(after: .max).newestTimestamp)
    }
    var writer = JSONWriter(capacity: 96)
    writer.beginObject()
    writer.key("peer")
    writer.string(peer)
    writer.key("upTo")
    writer.int(marker)
    writer.key("serverTime")
    writer.int(stamp)
    writer.endObject()
    return .ok(writer, station: station.description)
  }
}
