import Store

/// Whether a provider sends, and if not, why.
public enum ProviderState: Sendable, Equatable, CustomStringConvertible {
  /// Configured and sending.
  case ok
  /// Not configured or disabled (the reason is for the log).
  case off(String)
  /// Stopped by a configuration fault (a bad service account, an unreadable key file, a key
  /// APNs refuses) until the configuration is fixed and the program restarted.
  case stopped(String)

  /// The state as published for `/health`, `/metrics` and `aprs-cloud status` (without the reason for off).
  public var published: PushProviderState {
    switch self {
    case .ok: .ok
    case .off: .off
    case .stopped(let reason): .stopped(reason: reason)
    }
  }

  /// As published: `ok`, `off` or `stopped: …`.
  public var description: String { published.description }

  /// Stops the provider with `reason`; a provider already stopped keeps its first reason.
  mutating func stop(_ reason: String) {
    if case .stopped = self { return }
    self = .stopped(reason)
  }

  /// The reason it does not send; nil while ok.
  var reason: String? {
    switch self {
    case .ok: nil
    case .off(let why), .stopped(let why): why
    }
  }
}
