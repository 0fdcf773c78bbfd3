import Store

/// Who one delivery goes to: a registered device (through its platform's push channel) or a station's forward
/// target (through its kind's channel).
enum DeliveryRecipient {
  case device(DeviceRecord)
  case target(ForwardTarget)

  /// The key the engine remembers this recipient by (``Recipient``).
  var key: Recipient {
    switch self {
    case .device(let device): .of(device)
    case .target(let target): .of(target)
    }
  }

  /// The channel it is reached through.
  var channel: ChannelKind {
    switch self {
    case .device(let device): ChannelKind(device.platform)
    case .target(let target): ChannelKind(target.kind)
    }
  }

  /// The station it belongs to.
  var station: String {
    switch self {
    case .device(let device): device.station
    case .target(let target): target.station
    }
  }
}
