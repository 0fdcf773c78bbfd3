import JSON
import Store

extension APIHandler {
  /// The listener's counters shown under `listener.counters` (published by aprs-listener as `listener.<name>`).
  static let listenerCounterNames = [
    "linesRead", "messagesStored", "duplicates", "receipts", "acksSent", "acksSuppressed", "acksDropped",
    "drops",
    "invalidLines", "tooLong", "skipped", "reconnects",
  ]

  /// `GET /health`: 200 with a small JSON object when the database answers and the listener is
  /// running; 503 with `error` when the database does not answer, or when a listener has run on this
  /// database (its lease or its published state is there) but its lease has lapsed (it stopped or
  /// died; a lease lives 30 s). A database no listener ever ran on (a responder-only setup, or the
  /// seconds before the listener starts) is not held against the responder.
  ///
  /// `status` is `ok`, or `degraded` with the reasons in `degraded`: the listener is not running, it
  /// is not connected to APRS-IS, its login is unverified or receive-only (no ACKs), a push provider
  /// stopped on a configuration fault.
  ///
  /// `listener`: `running` (its lease is held), `connected` (logged in to APRS-IS, as last published by a running
  /// listener), `lastLineAgeSeconds`, and, once a listener has published them: `state`, `verified`,
  /// `receiveOnly` (nothing it sends gets through: no login, or an unverified one; ACKs are off), `server`,
  /// `login`, `filterMode` (`live`, `login` or `fullFeed`), `filterSize` (stations in the filter), `lineRate`
  /// (lines per second over the last minute), `updatedAgeSeconds`, and `counters` since it started.
  func health() -> APIResponse {
    let now = clock()
    do {
      let version = try database.schemaVersion()
      let lease = try database.lease()
      let published = try database.metaValues(prefix: "listener.")
      let running = lease.map { $0.expiresAt > now } ?? false
      let lastLine = published["listener.lastLineAt"].flatMap { Int64($0) }
      let pushStates = try ["android", "ios"].map { ($0, try database.meta("push.\($0).state") ?? "off") }
      let listenerExpected = lease != nil || published["listener.state"] != nil
      var degraded: [String] = []
      if listenerExpected && !running {
        degraded.append("the listener is not running (its lease lapsed)")
      } else if running && published["listener.connected"] != "1" {
        degraded.append("the listener is not connected to APRS-IS")
      }
      if running && published["listener.receiveOnly"] == "1" {
        degraded.append("the APRS-IS login is receive-only or unverified: nothing is ACKed")
      }
      for (platform, state) in pushStates where state.hasPrefix("stopped") {
        degraded.append("push for \(platform) is \(state)")
      }
      var writer = JSONWriter(capacity: 512)
      writer.beginObject()
      if listenerExpected && !running {
        writer.key("error")
        writer.string("the listener is not running")
      }
      writer.key("status")
      writer.string(degraded.isEmpty ? "ok" : "degraded")
      writer.key("degraded")
      writer.beginArray()
      for reason in degraded { writer.string(reason) }
      writer.endArray()
      writer.key("database")
      writer.string("ok")
      writer.key("schemaVersion")
      writer.int(version)
      writer.key("listener")
      writer.beginObject()
      writer.key("running")
      writer.bool(running)
      writer.key("connected")
      writer.bool(running && published["listener.connected"] == "1")
      writer.key("lastLineAgeSeconds")
      if let lastLine { writer.int(max(0, now - lastLine) / 1000) } else { writer.null() }
      if let state = published["listener.state"] {
        writer.key("state")
        writer.string(running ? state : "stopped")
        for flag in ["verified", "receiveOnly"] {
          writer.key(flag)
          writer.bool(published["listener." + flag] == "1")
        }
        for text in ["server", "login", "filterMode"] {
          writer.key(text)
          let value = published["listener." + text] ?? ""
          if value.isEmpty { writer.null() } else { writer.string(value) }
        }
        writer.key("filterSize")
        writer.int(published["listener.filterSize"].flatMap { Int($0) } ?? 0)
        writer.key("lineRate")
        writer.value(.number(JSONNumber(literal: Self.decimalLiteral(published["listener.lineRate"]))))
        writer.key("updatedAgeSeconds")
        if let updated = published["listener.updatedAt"].flatMap({ Int64($0) }) {
          writer.int(max(0, now - updated) / 1000)
        } else {
          writer.null()
        }
        writer.key("counters")
        writer.beginObject()
        for name in Self.listenerCounterNames {
          writer.key(name)
          writer.int(published["listener." + name].flatMap { Int($0) } ?? 0)
        }
        writer.endObject()
      }
      writer.endObject()
      // What the push sender last published per provider: ok, off or "stopped: <reason>".
      writer.key("push")
      writer.beginObject()
      for (platform, state) in pushStates {
        writer.key(platform)
        writer.string(state)
      }
      writer.endObject()
      writer.endObject()
      var response = APIResponse.ok(writer)
      if listenerExpected && !running {
        response.status = 503
        response.headers = [("Retry-After", "10")]
      }
      return response
    } catch {
      return .error(.unavailable("the database does not answer"))
    }
  }

  /// `text` when it is a plain decimal (`12`, `0.25`), else `0`: it is written into the JSON as a number.
  static func decimalLiteral(_ text: String?) -> String {
    guard let text, !text.isEmpty, text.utf8.count <= 24 else { return "0" }
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count <= 2, !parts[0].isEmpty,
      parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } })
    else { return "0" }
    return text
  }
}
