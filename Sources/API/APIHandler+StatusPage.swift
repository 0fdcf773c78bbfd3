import Store

extension APIHandler {
  /// `GET /status` (the private listener only, like `/metrics`): the operator's page (``StatusPage``), headed by
  /// the same verdict `/health` gives (``healthVerdict(now:)``: the same reasons, and the listener running by its
  /// lease or its fresh beacon). 503 with a plain page when the database does not answer.
  func statusPage() -> APIResponse {
    let now = clock()
    let headers = [
      (name: "Content-Security-Policy", value: "default-src 'none'; style-src 'unsafe-inline'"),
      (name: "Refresh", value: String(StatusPage.refreshSeconds)),
    ]
    do throws(StoreError) {
      let verdict = try healthVerdict(now: now)
      let page = StatusPage(
        now: now, health: verdict.status, reasons: verdict.degraded, running: verdict.running,
        listener: verdict.listener, stats: try database.stats(now: now, expiryMs: config.stationExpiryMs),
        push: verdict.push, sends: try database.sendStatus(), bans: try database.bans(now: now))
      return APIResponse(
        status: 200, headers: headers, body: Array(page.html.utf8), contentType: StatusPage.contentType)
    } catch {
      let body = "<!doctype html><title>aprs-cloud status</title><h1>the database does not answer</h1>\n"
      return APIResponse(
        status: 503, headers: headers, body: Array(body.utf8), contentType: StatusPage.contentType)
    }
  }
}
