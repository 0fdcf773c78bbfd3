import Store

/// A routed message once its addressee's settings were applied (``LineRouter/settle(_:settings:canTransmit:)``).
struct SettledMessage: Sendable, Equatable {
  /// The message to store.
  var incoming: IncomingMessage
  /// The ACK to send once the message (or this copy of it) is committed: ACK policy `server`, a numbered message,
  /// a connection that may transmit. Nil otherwise.
  var ack: PlannedAck?
  /// ACK policy `device`: the ACK kept with the message until a device pulls it, and sent for a later copy of a
  /// message already pulled. Nil for other policies.
  var deviceAck: PlannedAck? = nil
  /// ACK policy `fallback`, the station followed: the ACK held for the station's radio
  /// (``FallbackAckSchedule``), whether or not the connection may transmit now (that is asked when it is sent).
  var fallbackAck: PlannedAck? = nil
}

/// What the addressees' settings made of a batch's routed messages.
struct SettledBatch: Sendable, Equatable {
  /// The messages to store, in the routed order.
  var messages: [SettledMessage] = []
  /// Received messages dropped because their addressee blocks the sender: not stored, not ACKed, not pushed.
  var blocked = 0
}

extension LineRouter {
  /// The second half of routing, pure: applies each addressee's settings (`settings`, by upper-case address, as
  /// the writer read them in the transaction that stores the batch, so they hold at its commit) to the routed
  /// messages, before anything is written.
  ///
  /// - A received message whose sender the addressee blocks (``StationSettings/blocks(_:)``, a bare call blocking
  ///   every SSID) is dropped and counted; so is a subscription entry from (or about) a blocked call. Other
  ///   subscription entries pass without ACKs.
  /// - Its ACK follows the addressee's ``AckPolicy``: `server` keeps the router's ACK (planned only when the
  ///   connection may transmit); `device` keeps the earned ACK aside for the pull; `never` drops both.
  /// - A claim governs only the devices it brought or adopted (`reaches`, by upper-case address; ``ClaimReach``):
  ///   while the station has keyless devices registered before its claim, a blocked sender's message is stored
  ///   for them (the push sender keeps it from the governed devices) and a message is ACKed by the server when
  ///   one of them asked for ACKs, as it would be without the claim.
  /// - A collected copy (``IncomingMessage/to`` set: another SSID of the call) is dropped when the station no
  ///   longer collects that SSID, and keeps an ACK only for an SSID in its `ackSsids`, then as its policy says.
  /// - A message for a station without settings here (not registered at the commit) and a sent copy pass
  ///   unchanged, without ACKs (the store refuses the first; the second never earns one).
  /// - Policy `fallback`: while the filter follows the station's own transmissions (`own`,
  ///   ``OwnTransmissions/holdsAcks(of:)``) its earned ACK is held for its radio (``SettledMessage/fallbackAck``);
  ///   a station the filter does not follow (no room, not planned yet) and a collected copy are ACKed as under
  ///   `server`.
  /// `canTransmit`: ACKs may be sent now (for the router's plan, and for copies of pulled messages).
  static func settle(
    _ planned: [PlannedMessage], settings: [String: StationSettings], reaches: [String: ClaimReach] = [:],
    own: OwnTransmissions = .empty, canTransmit: Bool
  ) -> SettledBatch {
    var batch = SettledBatch()
    batch.messages.reserveCapacity(planned.count)
    for message in planned {
      let incoming = message.incoming
      guard incoming.direction == .received, let station = settings[incoming.station] else {
        batch.messages.append(SettledMessage(incoming: incoming, ack: nil, deviceAck: nil))
        continue
      }
      let reach = reaches[incoming.station]
      let earlier = (reach?.earlierDevices ?? 0) > 0
      let blocked = station.blocks(incoming.peer)
      if blocked && (!earlier || incoming.entry != nil) {
        batch.blocked += 1
        continue
      }
      if incoming.entry != nil && incoming.entry?.room == nil {
        // A subscription entry is never ACKed, whatever the station's policy (a room's entry is a message to the
        // station: its policy holds).
        batch.messages.append(SettledMessage(incoming: incoming, ack: nil, deviceAck: nil))
        continue
      }
      if let to = incoming.to {
        // A collected copy: only while the station still collects that SSID, ACKed only for `ackSsids`.
        let (_, ssid) = SSIDCoverage.split(to)
        let own = SSIDCoverage.split(incoming.station).ssid ?? 0
        guard let ssid, station.ssids.others(own: own).contains(ssid) else { continue }
        if !station.ackSsids.contains(ssid) {
          batch.messages.append(SettledMessage(incoming: incoming, ack: nil, deviceAck: nil))
          continue
        }
      }
      // The earlier devices' ACKs as without the claim; a blocked sender gets only those.
      var policy: AckPolicy =
        reach?.earlierWantAcks == true && earlier ? .server : blocked ? .never : station.ackPolicy
      if policy == .fallback && (incoming.to != nil || !own.holdsAcks(of: incoming.station)) {
        policy = .server
      }
      switch policy {
      case .server:
        // The router planned an ACK where the station's stored policy is `server` (`fallback` is stored so);
        // one the earlier devices ask for is the ACK the message earned.
        let stored = station.ackPolicy == .server || station.ackPolicy == .fallback
        let ack = stored ? message.ack : message.earnedAck
        batch.messages.append(
          SettledMessage(incoming: incoming, ack: canTransmit ? ack : nil, deviceAck: nil))
      case .fallback:
        batch.messages.append(SettledMessage(incoming: incoming, ack: nil, fallbackAck: message.earnedAck))
      case .device:
        batch.messages.append(SettledMessage(incoming: incoming, ack: nil, deviceAck: message.earnedAck))
      case .never:
        batch.messages.append(SettledMessage(incoming: incoming, ack: nil, deviceAck: nil))
      }
    }
    return batch
  }
}
