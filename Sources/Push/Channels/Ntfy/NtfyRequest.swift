import Config

/// The ntfy channel's request: a POST of the message's text to the target's topic URL with ntfy's `Title`, `Tags`
/// and `Priority` headers (``ForwardPayload/ntfyHeaders(message:priority:token:)``) and the target's access token
/// as `Authorization: Bearer` when it has one.
enum NtfyRequest {
  /// The request of `job`. Throws when the job carries no message or the target's URL is not `https://`.
  static func request(_ job: DeliveryJob, settings: PushConfig.Forward) throws(PushError) -> HTTPRequest {
    let target = job.target
    guard let entry = job.entry else { throw PushError("a forward without a message") }
    var request = HTTPRequest(
      url: try ForwardEndpoint.url(of: target),
      headers: ForwardPayload.ntfyHeaders(
        message: entry.message, priority: target.priority, token: target.secret),
      body: ForwardPayload.ntfyBody(station: target.station, message: entry.message),
      caFile: settings.caFile)
    request.refusePrivateAddresses = !settings.allowPrivateEndpoints
    return request
  }
}
