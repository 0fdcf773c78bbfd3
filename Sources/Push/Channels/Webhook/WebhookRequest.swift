import Config

/// The webhook channel's request: a JSON POST of the message (``ForwardPayload/webhookBody(station:message:)``)
/// signed with the target's secret at the time it goes (``ForwardPayload/webhookHeaders(secret:seconds:body:)``).
enum WebhookRequest {
  /// The request of `job` at `now` (epoch ms). Throws when the job carries no message or the target's URL is not
  /// `https://`.
  static func request(_ job: DeliveryJob, settings: PushConfig.Forward, now: Int64) throws(PushError)
    -> HTTPRequest
  {
    let target = job.target
    guard let entry = job.entry else { throw PushError("a forward without a message") }
    let body = ForwardPayload.webhookBody(station: target.station, message: entry.message)
    var request = HTTPRequest(
      url: try ForwardEndpoint.url(of: target),
      headers: ForwardPayload.webhookHeaders(secret: target.secret ?? "", seconds: now / 1000, body: body),
      body: body, caFile: settings.caFile)
    request.refusePrivateAddresses = !settings.allowPrivateEndpoints
    return request
  }
}
