/// Which of a station's subscriptions a message-format packet matches (``SubscriptionRule``): pure, beside the
/// message classifier (``AddressedPacket/classify(_:)``) whose kinds it reads. Watches are not matched here
/// (any packet from the call counts; see ``WatchTracker``).
///
/// - bulletin: a ``PacketKind/bulletin`` or ``PacketKind/announcement`` whose addressee the pattern matches;
/// - group: a ``PacketKind/message`` to the call (an ack or rej to it is no group traffic);
/// - nws: a ``PacketKind/weather`` message whose text names one of the zones (``NWSZones``, every form the
///   weather servers send); a message naming no zone never matches here (a line continuing a matched alert is
///   stored with it by the listener: ``WeatherAlertIdentity``).
public struct SubscriptionMatcher: Sendable, Equatable {
  /// The subscriptions to match (one station's, or everyone's with their station beside).
  public let subscriptions: [Subscription]

  public init(_ subscriptions: [Subscription]) {
    self.subscriptions = subscriptions
  }

  /// The subscriptions `message` matches, in their order. The zones of a weather message are read once.
  public func matches(_ message: AddressedPacket) -> [Subscription] {
    var zones: Set<String>?
    return subscriptions.filter { subscription in
      switch subscription.rule {
      case .bulletin(let pattern):
        return (message.kind == .bulletin || message.kind == .announcement)
          && pattern.matches(message.addressee)
      case .group(let call):
        return message.kind == .message && message.addressee == call
      case .nws(let wanted):
        guard message.kind == .weather else { return false }
        if zones == nil { zones = Set(NWSZones.zones(in: message.text)) }
        return !(zones ?? []).isDisjoint(with: wanted)
      case .watch, .net:
        return false
      }
    }
  }
}
