import Platform

extension RetryPolicy {
  /// The decision for a push service's answer to a Web Push / UnifiedPush POST (RFC 8030 §5, docs/protocol.md):
  /// 200, 201 or 202 delivered; 404 or 410 the subscription is gone (delete it); 429 wait `Retry-After` (60 s
  /// without one, doubling); 5xx and no answer back off; 413 and any other refusal (400, 401 or 403 for the VAPID
  /// header, a redirect) give that push up and keep the subscription (the client deletes one that answers 400,
  /// 403 or 405 on every push for a day: `WebPushRefusals`). An endpoint whose host resolved only to
  /// addresses that are not public (`ProviderResponse.refusedAddress`: the request never left) is deleted like
  /// a 404 and not retried: a push service's endpoint never legitimately resolves there, and a client that
  /// registered it was aiming the server at its own network.
  ///
  /// 429 and 5xx retry at the later of `Retry-After` and the backoff (a 429 without `Retry-After`: 60 s,
  /// doubling for each further 429 in a row, ``throttleMs(throttles:)``), never past `expiresAt` by the sender's
  /// own choice (``later(of:orWait:now:expiresAt:)``).
  public static func webPush(
    _ response: ProviderResponse, now: Int64, attempts: Int, jitter: Double, throttles: Int = 0,
    expiresAt: Int64? = nil
  ) -> PushDecision {
    if let address = response.refusedAddress {
      return .gone(reason: refusedReason(address), refreshedBefore: nil)
    }
    if let failure = response.transportError {
      let at = transportRetry(response, now: now, attempts: attempts, jitter: jitter)
      return .retry(at: at, reason: "no answer: \(failure)")
    }
    let status = response.status
    let detail = response.body.isEmpty ? "" : ": " + response.bodySummary
    switch status {
    case 200, 201, 202:
      return .delivered
    case 404, 410:
      return .gone(reason: "\(status) the subscription is gone", refreshedBefore: nil)
    case 413:
      return .giveUp(reason: "413 the push is too large for this push service")
    case 429:
      let at = throttledRetry(
        response, now: now, attempts: attempts, throttles: throttles, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: "429 rate limited" + detail)
    case 500...599:
      let at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: "\(status)" + detail)
    case 401, 403:
      return .giveUp(reason: "\(status) the push service refused the VAPID authorization" + detail)
    default:
      return .giveUp(reason: "\(status)" + detail)
    }
  }

  /// Why a push to an endpoint resolving to `address` was refused, for the log and `aprs-cloud push-test`.
  static func refusedReason(_ address: IPAddress) -> String {
    let range = address.reservedRange.map { " (\($0))" } ?? ""
    return "the endpoint's host is at \(address)\(range), a loopback or private address"
  }
}
