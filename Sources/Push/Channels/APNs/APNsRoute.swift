import Store

/// Which APNs environment a device's push goes to, and what a `BadDeviceToken` means: pure.
///
/// A development build of the app has sandbox tokens, a store or TestFlight build production ones, and
/// each environment refuses the other's tokens with `400 BadDeviceToken`. So a refused token is tried
/// once in the other environment before it is called dead; the environment that accepted it is
/// remembered for the device (`devices.apns_environment`) and used first from then on. A wrong
/// `production` setting then costs one extra request per device instead of every device.
enum APNsRoute {
  /// The environment configured to be tried first for a device none accepted yet.
  static func configured(production: Bool) -> APNsEnvironment { production ? .production : .sandbox }

  /// Where a device's push goes first: the environment that last accepted it, else the configured one.
  static func first(stored: APNsEnvironment?, production: Bool) -> APNsEnvironment {
    stored ?? configured(production: production)
  }

  /// What follows an answer from one environment.
  enum Step: Equatable {
    /// Send the same push to this (the other) environment.
    case tryOther(APNsEnvironment)
    /// The push's outcome.
    case done(PushDecision)
  }

  /// The step after `decision`, the policy's reading of an answer from `environment`.
  /// `badDeviceToken`: the answer was `400 BadDeviceToken`; `triedOther`: the push already went
  /// to the other environment after such an answer.
  static func next(
    after decision: PushDecision, badDeviceToken: Bool, environment: APNsEnvironment, triedOther: Bool
  ) -> Step {
    guard badDeviceToken else { return .done(decision) }
    guard triedOther else { return .tryOther(environment.other) }
    return .done(
      .gone(
        reason:
          "400 BadDeviceToken in both environments (\(environment.other.rawValue) and \(environment.rawValue))",
        refreshedBefore: nil))
  }

  /// The environment to store for a device `accepted` took a push for: nil when `stored` says so already.
  static func remember(stored: APNsEnvironment?, accepted: APNsEnvironment) -> APNsEnvironment? {
    stored == accepted ? nil : accepted
  }
}

/// Notices a `production` setting the devices contradict: pure.
///
/// Since the sender started, when at least `minimumDevices` devices took pushes through the environment
/// `production` does not pick and not one through the one it picks, the setting is almost certainly wrong
/// (the app builds these users run get the other environment's tokens). Pushes still arrive (each device's
/// environment is remembered), so this is a warning for `/health` and the log, not a stop. One push
/// accepted by the configured environment clears it for good: a mixed fleet (development and store
/// builds) is a valid setup.
struct APNsEnvironmentWatch {
  /// Distinct devices the other environment must have accepted before the warning.
  static let minimumDevices = 2

  /// The environment `production` picks.
  let configured: APNsEnvironment
  private var configuredAccepted = false
  private var otherDevices: Set<String> = []

  init(production: Bool) {
    configured = APNsRoute.configured(production: production)
  }

  /// `environment` accepted a push for `token`.
  mutating func accepted(token: String, by environment: APNsEnvironment) {
    if environment == configured {
      configuredAccepted = true
      otherDevices = []
    } else if !configuredAccepted, otherDevices.count < Self.minimumDevices {
      otherDevices.insert(token)
    }
  }

  /// The warning, naming both environments; nil while the setting looks right.
  var warning: String? {
    guard !configuredAccepted, otherDevices.count >= Self.minimumDevices else { return nil }
    let other = configured.other
    return
      "production = \(configured == .production) in [messaging.ios.apns], but APNs \(configured.rawValue) "
      + "refuses every device token and \(other.rawValue) accepts them (\(otherDevices.count) devices so far): "
      + "set production = \(configured != .production) (pushes go through \(other.rawValue) meanwhile)"
  }
}
