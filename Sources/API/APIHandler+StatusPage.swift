import JSON
import Store

extension APIHandler {
  /// `GET /status` (the private listener only, like `/metrics`): the operator's page (``StatusPage``). What
  /// `/health` says heads it (the same reasons, read from its own answer so the two never disagree). 503 with a
  /// plain page when the database does not answer.
  func statusPage() -> APIResponse {
    let now = clock()
    let healthAnswer = health()
    var status = "error"
    var reasons = ["the database does not answer"]
    if case .object(let object)? = try? JSONParser.parse(healthAnswer.body) {
      if case .string(let text)? = object["status"] { status = text }
      if case .array(let items)? = object["degraded"] {
        reasons = items.compactMap { item in
          if case .string(let text) = item { return text }
          return nil
        }
      }
    }
    let headers = [
      (name: "Content-Security-Policy", value: "default-src 'none'; style-src 'unsafe-inline'"),
      (name: "Refresh", value: String(StatusPage.refreshSeconds)),
    ]
    do {
      let stats = try database.stats(now: now, expiryMs: config.stationExpiryMs)
      let page = StatusPage(
        now: now, health: status, reasons: reasons,
        running: stats.lease.map { $0.expiresAt > now } ?? false, listener: try database.listenerStatus(),
        stats: stats, push: try database.pushStatus(), sends: try database.sendStatus(),
        bans: try database.bans(now: now))
      return APIResponse(
        status: 200, headers: headers, body: Array(page.html.utf8), contentType: StatusPage.contentType)
    } catch {
      let body = "<!doctype html><title>aprs-cloud status</title><h1>the database does not answer</h1>\n"
      return APIResponse(
        status: 503, headers: headers, body: Array(body.utf8), contentType: StatusPage.contentType)
    }
  }
}
