import Store

/// How one delivery ended: its job, the channel's decision and the answer it was made from.
struct DeliveryOutcome {
  var job: DeliveryJob
  var decision: PushDecision
  /// The provider's or target's answer; nil when the job never reached it.
  var response: ProviderResponse?
  /// A forward's class of failure (``ForwardDecision/problem``); nil for pushes.
  var problem: ForwardProblem?
  /// The service asked this whole server to wait (``ForwardDecision/wholeService``).
  var wholeService = false
}
