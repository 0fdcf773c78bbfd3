import JSON
import Store

extension APIHandler {
  /// `GET /health`: 200 with a small JSON object when the database answers, 503 when it does not.
  /// It carries what the listener last recorded about its APRS-IS connection.
  func health() -> APIResponse {
    let now = clock()
    do {
      let version = try database.schemaVersion()
      let lease = try database.lease()
      let connected = try database.meta("listener.connected")
      let lastLine = try database.meta("listener.lastLineAt").flatMap { Int64($0) }
      var writer = JSONWriter(capacity: 256)
      writer.beginObject()
      writer.key("status")
      writer.string("ok")
      writer.key("database")
      writer.string("ok")
      writer.key("schemaVersion")
      writer.int(version)
      writer.key("listener")
      writer.beginObject()
      writer.key("running")
      writer.bool(lease.map { $0.expiresAt > now } ?? false)
      writer.key("connected")
      writer.bool(connected == "1")
      writer.key("lastLineAgeSeconds")
      if let lastLine { writer.int(max(0, now - lastLine) / 1000) } else { writer.null() }
      writer.endObject()
      writer.endObject()
      return .ok(writer)
    } catch {
      return .error(.unavailable("the database does not answer"))
    }
  }
}
