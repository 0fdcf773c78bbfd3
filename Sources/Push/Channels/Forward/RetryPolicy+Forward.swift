import Store

/// What the push sender does after one forward target's answer: the decision for the message, the class of a
/// failure (shown with the target's `failing` or `disabled` status) and whether the whole service must wait.
struct ForwardDecision: Sendable, Equatable {
  var decision: PushDecision
  /// The class of the failure (nil when delivered, or for a message dropped).
  var problem: ForwardProblem?
  /// The wait is the service's for this server's address: every target at the same origin waits until the retry.
  var wholeService = false
}

extension RetryPolicy {
  /// The decision for a forward target's answer (docs/api.md "Forwarding (email, ntfy, webhooks)"), by the table of its channel
  /// (``NtfyAnswers``, ``HTTPAnswers`` for webhooks, ``SMTPAnswers`` for mail), with the push sender's waits:
  /// a passing failure is retried at the later of `Retry-After` and the backoff (a 429 without `Retry-After`: 60 s,
  /// doubling with each in a row; no answer: the backoff), never past `expiresAt`. A host that resolved only to
  /// addresses that are not public (`ProviderResponse.refusedAddress`) disables the target, like a 404.
  static func forward(
    _ response: ProviderResponse, kind: ForwardKind, hasToken: Bool = false, now: Int64, attempts: Int,
    jitter: Double, throttles: Int = 0, expiresAt: Int64? = nil
  ) -> ForwardDecision {
    if let address = response.refusedAddress {
      return ForwardDecision(
        decision: .gone(reason: refusedReason(address), refreshedBefore: nil), problem: .privateAddress
      )
    }
    let verdict: ForwardVerdict =
      switch kind {
      case .email: SMTPAnswers.verdict(response)
      case .ntfy: NtfyAnswers.verdict(response, hasToken: hasToken)
      case .webhook: HTTPAnswers.verdict(response)
      }
    switch verdict {
    case .delivered:
      return ForwardDecision(decision: .delivered)
    case .disable(let problem, let reason):
      return ForwardDecision(decision: .gone(reason: reason, refreshedBefore: nil), problem: problem)
    case .dropMessage(let reason):
      return ForwardDecision(decision: .giveUp(reason: reason))
    case .failing(let problem, let reason, let wait):
      let at: Int64
      var wholeService = false
      switch wait {
      case .backoff:
        at = serverErrorRetry(response, now: now, attempts: attempts, expiresAt: expiresAt, jitter: jitter)
      case .transport:
        at = transportRetry(response, now: now, attempts: attempts, jitter: jitter)
      case .throttled(let whole):
        wholeService = whole
        at = throttledRetry(
          response, now: now, attempts: attempts, throttles: throttles, expiresAt: expiresAt, jitter: jitter)
      }
      return ForwardDecision(
        decision: .retry(at: at, reason: reason), problem: problem, wholeService: wholeService)
    }
  }
}
