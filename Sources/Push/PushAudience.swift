import Store

/// Which entries of a station's batch a device sees, by what it opted into (docs/protocol.md "Opt-in answers
/// (`want`)"): each entry is in a ring (``Store/EntryRing``); messages to the station itself reach every device,
/// messages to other SSIDs of its call only devices registered with `want:["ssids"]`, subscription entries only
/// devices registered with `want:["subscriptions"]`, room entries only devices registered with `want:["rooms"]`.
/// Pure.
enum PushAudience {
  /// The wants that change what a push holds: the key its content is built (and cached) under.
  static let relevant: Wants = [.ssids, .subscriptions, .rooms]

  /// What of `device`'s wants shapes its pushes.
  static func wants(of device: DeviceRecord) -> Wants { device.wants.intersection(relevant) }

  /// Whether a device with `wants` sees `entry`.
  static func sees(_ wants: Wants, _ entry: OutboxEntry) -> Bool {
    let ring = EntryRing.of(to: entry.message.to, entry: entry.message.entry)
    return wants.ringMask & (1 << ring.rawValue) != 0
  }

  /// The entries of `entries` a device with `wants` sees, in their order.
  static func visible(_ entries: [OutboxEntry], to wants: Wants) -> [OutboxEntry] {
    entries.filter { sees(wants, $0) }
  }

  /// The priority of a push announcing `entries`: low when every one is a subscription entry that is not urgent
  /// (bulletins, group and NWS messages, a watched station heard or silent) or, with `airAnswered` ``Store/AirAnswered/quiet``,
  /// a message the station's own radio answered; high when any other is a message or an emergency.
  static func priority(of entries: [OutboxEntry], airAnswered: AirAnswered = .quiet) -> PushPriority {
    entries.allSatisfy { entry in
      if let subscription = entry.message.entry { return !subscription.isUrgent }
      return airAnswered == .quiet && entry.message.answeredBy == .air
    } ? .low : .high
  }
}
