import JSON

extension APIHandler {
  /// `GET /v1/info` (also `HEAD`, and `POST` with any body; no auth):
  /// `{"server":"aprs-cloud","version":…,"protocolVersion":"1.6","features":[…],"maxWait":300,"vapidPublicKey":…}`
  /// (`protocolVersion`: ``ServerInfo/protocolVersion``, docs/protocol.md "Versions"), the key only when
  /// Web Push is on and the listener has made it; `send` only while the listener's login can transmit (a
  /// receive-only or unverified one cannot: `/v1/send` would answer 503).
  func info() -> APIResponse {
    let info = config.info
    let key = info.webPush ? info.vapidPublicKey() : nil
    let transmits = info.send && (try? database.listenerStatus().receiveOnly) == false
    var writer = JSONWriter(capacity: 256)
    writer.beginObject()
    writer.key("server")
    writer.string(ServerInfo.name)
    writer.key("version")
    writer.string(info.version)
    writer.key("protocolVersion")
    writer.string(ServerInfo.protocolVersion)
    writer.key("features")
    writer.beginArray()
    for feature in info.features(vapidPublicKey: key, transmits: transmits) { writer.string(feature) }
    writer.endArray()
    writer.key("maxWait")
    writer.int(Int64(info.maxWaitSeconds))
    if let key {
      writer.key("vapidPublicKey")
      writer.string(key)
    }
    if !info.forwardTypes.isEmpty {
      writer.key("forward")
      writer.beginArray()
      for type in info.forwardTypes { writer.string(type) }
      writer.endArray()
    }
    writer.endObject()
    return .ok(writer)
  }
}
