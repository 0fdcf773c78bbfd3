import JSON
import Store

extension APIHandler {
  /// `GET /health`: 200 with a small JSON object when the database answers and the listener is
  /// running; 503 with `error` when the database does not answer, or when a listener has run on this
  /// database (its lease or its published state is there) but its lease has lapsed (it stopped or
  /// died; a lease lives 30 s). A database no listener ever ran on (a responder-only setup, or the
  /// seconds before the listener starts) is not held against the responder.
  ///
  /// `status` is `ok`, or `degraded` with the reasons in `degraded`: the listener is not running, it
  /// is not connected to APRS-IS, its login is unverified or receive-only (no ACKs), its transmit budget for sent
  /// messages is spent, a push provider
  /// stopped on a configuration fault, or one that published a warning: one that sends (an APNs `production`
  /// setting the devices' tokens contradict) or one left off by a missing setting (Web Push without `subject`:
  /// the key and the fix).
  ///
  /// `listener`: `running` (its lease is held), `connected` (logged in to APRS-IS, as last published by a running
  /// listener), `lastLineAgeSeconds`, and, once a listener has published them: `state`, `verified`,
  /// `receiveOnly` (nothing it sends gets through: no login, or an unverified one; ACKs are off), `server`,
  /// `login`, `lastError` (why its last attempt to connect failed or its last connection ended, null once it
  /// logged in again), `filterSize` (registered stations the filter covers), `filterBytes` (its one `#filter` line's
  /// length, CR LF included), `filterEntries` (entries on that line), `filterExactStations` (stations matched
  /// by an exact entry rather than a prefix), `lineRate` (lines per second over the last minute),
  /// `updatedAgeSeconds`, and `counters` since it started (each `ListenerCounter`, by name).
  ///
  /// `send`: `budgetFull`, true while a running listener's transmit budget (`[send] transmitBudgetPerMinute`) is
  /// spent and copies of sent messages wait their turn; a degraded reason too, but not a 503 (nothing is lost,
  /// the copies only go out later).
  func health() -> APIResponse {
    let now = clock()
    do {
      let version = try database.schemaVersion()
      let lease = try database.lease()
      let listener = try database.listenerStatus()
      let push = try database.pushStatus()
      let running = lease.map { $0.expiresAt > now } ?? false
      let listenerExpected = lease != nil || listener.state != nil
      var degraded: [String] = []
      if listenerExpected && !running {
        degraded.append("the listener is not running (its lease lapsed)")
      } else if running && !listener.connected {
        degraded.append(
          "the listener is not connected to APRS-IS"
            + (listener.lastError.map { " (last error: \($0))" } ?? ""))
      }
      if running && listener.receiveOnly {
        degraded.append("the APRS-IS login is receive-only or unverified: nothing is ACKed")
      }
      let budgetFull = running && listener.sendBudgetFull
      if budgetFull {
        degraded.append(
          "the transmit budget for sent messages ([send] transmitBudgetPerMinute) is spent: due copies wait"
            + " their turn")
      }
      for platform in DevicePlatform.allCases {
        if case .stopped = push.state(of: platform) {
          degraded.append("push for \(platform.rawValue) is \(push.state(of: platform))")
        } else if let warning = push.warnings[platform] {
          degraded.append("push for \(platform.rawValue): \(warning)")
        }
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
      writer.bool(running && listener.connected)
      writer.key("lastLineAgeSeconds")
      if let lastLine = listener.lastLineAt {
        writer.int(max(0, now - lastLine) / 1000)
      } else {
        writer.null()
      }
      if let state = listener.state {
        writer.key("state")
        writer.string(running ? state : "stopped")
        writer.key("verified")
        writer.bool(listener.verified)
        writer.key("receiveOnly")
        writer.bool(listener.receiveOnly)
        for (key, value) in [
          ("server", listener.server), ("login", listener.login), ("lastError", listener.lastError),
        ] {
          writer.key(key)
          if let value { writer.string(value) } else { writer.null() }
        }
        for (key, value) in [
          ("filterSize", listener.filterSize), ("filterBytes", listener.filterBytes),
          ("filterEntries", listener.filterEntries), ("filterExactStations", listener.filterExactStations),
        ] {
          writer.key(key)
          writer.int(value)
        }
        writer.key("lineRate")
        writer.value(.number(JSONNumber(literal: ListenerStatus.decimal(listener.lineRate))))
        writer.key("updatedAgeSeconds")
        if let updated = listener.updatedAt {
          writer.int(max(0, now - updated) / 1000)
        } else {
          writer.null()
        }
        writer.key("counters")
        writer.beginObject()
        for counter in ListenerCounter.allCases {
          writer.key(counter.rawValue)
          writer.int(listener.counts[counter])
        }
        writer.endObject()
      }
      writer.endObject()
      // Sending: whether the running listener's transmit budget is spent (copies are waiting).
      writer.key("send")
      writer.beginObject()
      writer.key("budgetFull")
      writer.bool(budgetFull)
      writer.endObject()
      // What the push sender last published per provider: ok, off or "stopped: <reason>".
      writer.key("push")
      writer.beginObject()
      for platform in DevicePlatform.allCases {
        writer.key(platform.rawValue)
        writer.string(push.state(of: platform).description)
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
}
