/// An app whose devices this server pushes to (issue "several apps"): 1–32 lower-case letters, digits and
/// `-`. Each app has its own FCM project and APNs key and topic (`[apps.<id>]`); ``htcommander`` is the default
/// app, whose credentials are `[messaging.android]` and `[messaging.ios.apns]`, and what a register without `app`
/// means.
public struct AppID: Hashable, Sendable, Comparable, CustomStringConvertible {
  /// The id as written.
  public let rawValue: String

  /// The default app: HTCommander, the app this server's protocol came from.
  public static let htcommander = AppID(trusted: "htcommander")

  /// The longest id, in characters.
  public static let maximumLength = 32

  /// `text` when it is an app id (`[a-z0-9-]{1,32}`), nil otherwise.
  public init?(_ text: some StringProtocol) {
    let bytes = Array(text.utf8)
    guard (1...Self.maximumLength).contains(bytes.count),
      bytes.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D })
    else { return nil }
    rawValue = String(text)
  }

  private init(trusted rawValue: String) { self.rawValue = rawValue }

  public var description: String { rawValue }

  public static func < (left: AppID, right: AppID) -> Bool { left.rawValue < right.rawValue }
}
