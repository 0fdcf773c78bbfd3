import Store

/// Who one delivery goes to: a device of the push clients (by its token) or a forward target (by its
/// ``Store/ForwardTarget/deliveryKey``). The push engine keys what it remembers per recipient by this value
/// (which outbox rows each one got, when it may be tried again, how often it was throttled), so a device and a
/// forward target can never be mistaken for each other.
enum Recipient: Hashable, Sendable {
  /// A device, by its push token.
  case device(token: String)
  /// A forward target, by its delivery key.
  case forward(key: String)

  /// The recipient of `device`.
  static func of(_ device: DeviceRecord) -> Recipient { .device(token: device.token) }

  /// The recipient of `target`.
  static func of(_ target: ForwardTarget) -> Recipient { .forward(key: target.deliveryKey) }
}
