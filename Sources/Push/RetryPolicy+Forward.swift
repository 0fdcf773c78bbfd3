extension RetryPolicy {
  /// The decision for a forward target's answer (README "Forwarding"), the push sender's discipline:
  /// - ntfy and webhooks (HTTP): 2xx delivered; 404 or 410 the target is gone (`.deleteToken`: the target is
  ///   disabled, with the reason); 429 and 5xx retried at the later of `Retry-After` and the backoff (a 429 without
  ///   `Retry-After`: 60 s, doubling); no answer: the backoff; anything else (400, 401, 403, 413, a redirect) gives
  ///   that message up and keeps the target.
  /// - email (SMTP): the server took it (250) delivered; a 5xx reply to the recipient (`RCPT TO`: a mailbox that
  ///   does not exist, a refused domain; libcurl says `RCPT failed: 550`) disables the target; any other failure
  ///   (a 4xx, no answer, and the operator's own server refusing the login, the sender or TLS: `535`, `MAIL failed:
  ///   550`, `530`) is retried with the backoff and never disables the owner's address.
  /// - A host that resolved only to addresses that are not public (`ProviderResponse.refusedAddress`) disables the
  ///   target without a retry, like a 404.
  /// How libcurl's error text starts when the SMTP server refused the recipient (lib/smtp.c, `RCPT failed: %d`),
  /// as against the sender (`MAIL failed`), the login (`CURLE_LOGIN_DENIED`) or TLS.
  static let recipientRefusedPrefix = "RCPT failed"

  static func forward(
    _ response: ProviderResponse, mail: Bool, now: Int64, attempts: Int, jitter: Double, throttles: Int = 0,
    expiresAt: Int64? = nil
  ) -> PushDecision {
    if let address = response.refusedAddress {
      return .deleteToken(reason: refusedReason(address), refreshedBefore: nil)
    }
    if mail {
      if response.transportError == nil { return .delivered }
      let failure = response.transportError ?? ""
      if (500...599).contains(response.status), failure.hasPrefix(Self.recipientRefusedPrefix) {
        return .deleteToken(reason: "the mail server refused the address: \(failure)", refreshedBefore: nil)
      }
      let at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: "mail not sent: \(failure)")
    }
    if let failure = response.transportError {
      let at = transportRetry(response, now: now, attempts: attempts, jitter: jitter)
      return .retry(at: at, reason: "no answer: \(failure)")
    }
    let status = response.status
    let detail = response.body.isEmpty ? "" : ": " + response.bodySummary
    switch status {
    case 200...299:
      return .delivered
    case 404, 410:
      return .deleteToken(reason: "\(status) the endpoint is gone", refreshedBefore: nil)
    case 429:
      let at = throttledRetry(
        response, now: now, attempts: attempts, throttles: throttles, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: "429 rate limited" + detail)
    case 500...599:
      let at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      return .retry(at: at, reason: "\(status)" + detail)
    default:
      return .giveUp(reason: "\(status)" + detail)
    }
  }
}
