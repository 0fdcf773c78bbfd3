import Testing

extension Trait where Self == TimeLimitTrait {
  /// The time limit of an integration test: a guard against a hang, never a measure of speed. Swift Testing starts
  /// a test's clock when its runner reaches the test, and a synchronous body then waits for one of the pool's
  /// threads (two on a 2-core machine) behind the other integration tests, which block on child processes for up to
  /// 5 minutes each: a 3-minute limit failed two 20-second tests that waited in that queue. Every loop of these
  /// tests is bounded on its own; this only stops a run that would otherwise never end, within the 30-minute budget
  /// of the whole `make test`.
  static var hangGuard: Self { .timeLimit(.minutes(20)) }
}
