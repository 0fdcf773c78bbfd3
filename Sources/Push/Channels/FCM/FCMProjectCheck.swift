/// Tells a device token of another Firebase project from a service account of another project: pure.
///
/// FCM answers `403 SENDER_ID_MISMATCH` when a registration token was issued for another sender (Firebase
/// project) than the one sending. For one token that is the token's fault (an install of another build of the
/// app), and docs/push.md "FCM (Android)" says the token is unusable. For every token it is the server's: a service account of the
/// wrong project makes FCM answer that way for each device, and deleting on the first answer would wipe every
/// Android device within one round of pushes, with nothing to recover them but each phone's next heartbeat.
///
/// So the project must prove itself first, the way an APNs token is deleted only when both environments
/// refuse it: until FCM accepted one push since the sender started, a mismatch keeps its token and gives that
/// push up; once `distinctTokensToStop` different tokens were refused that way and none accepted, the provider
/// stops loudly (`/health` degraded, the log says which project the account is for) and deletes nothing. After
/// the first accepted push a mismatch deletes its token as before.
struct FCMProjectCheck {
  /// Distinct tokens refused with a mismatch, and no push accepted, that stop the provider.
  static let distinctTokensToStop = 3

  /// What to do with a token FCM answered `SENDER_ID_MISMATCH` for.
  enum Verdict: Equatable {
    /// The project is proven: the token belongs to another one; delete it.
    case deleteToken
    /// Not proven yet: keep the token, give this push up.
    case keepToken
    /// This many distinct tokens were refused and none accepted: the account is for another project.
    case stopProvider(tokens: Int)
  }

  /// Whether FCM accepted a push since start (the service account's project is the app's).
  private(set) var proven = false
  private var refused: Set<String> = []

  /// FCM accepted a push: the project is right.
  mutating func accepted() {
    proven = true
    refused = []
  }

  /// FCM answered `SENDER_ID_MISMATCH` for `token`.
  mutating func senderMismatch(token: String) -> Verdict {
    guard !proven else { return .deleteToken }
    refused.insert(token)
    return refused.count >= Self.distinctTokensToStop ? .stopProvider(tokens: refused.count) : .keepToken
  }
}
