import JSON
import Store

/// What one answer of a forward target means for its message and for the target (docs/api.md "Forwarding (email, ntfy, webhooks)", the tables
/// of answers per channel): pure.
enum ForwardVerdict: Sendable, Equatable {
  /// The service took the message.
  case delivered
  /// The target can never work as saved: disabled with the reason (the owner is told once), and nothing more is
  /// sent to it.
  case disable(ForwardProblem, reason: String)
  /// A passing failure: the message is retried after `wait`, and the target shows `failing` with the reason until
  /// the next delivery.
  case failing(ForwardProblem, reason: String, wait: ForwardWait)
  /// This message cannot be delivered (the service refused it as sent); the target is kept as it is.
  case dropMessage(reason: String)
}

/// How long a failing forward waits before it is tried again.
enum ForwardWait: Sendable, Equatable {
  /// The growing backoff (10 s doubling with jitter, at most 15 min), or `Retry-After` when that is later.
  case backoff
  /// No answer: the backoff (a lost connection is tried again sooner once).
  case transport
  /// A 429: `Retry-After` when given, else 60 s doubling with each 429 in a row. `wholeService`: the limit is the
  /// service's for this server's address (all stations share it), so every target at the same origin waits too.
  case throttled(wholeService: Bool)
}
