/// `ackPolicy:"device"` (docs/protocol.md "Station settings"): a message earns its ACK when one of the station's
/// devices pulls it (sync, long poll, register with history) within 30 minutes of its arrival; a message never
/// pulled, or pulled later, is never ACKed. The pull marks the message in the transaction that reads it
/// (`Database.sync`); the listener then sends the ACK, through the 30 s rule.
public enum DeviceAckRule {
  /// How long after its arrival a pull still earns a message its ACK, ms (30 minutes: about how long APRS
  /// senders retry, see docs/protocol.md "Sending messages").
  public static let pullWindowMs: Int64 = 30 * 60_000

  /// Whether a pull at `pulledAt` of a message that arrived (was stored) at `arrivedAt` earns its ACK (epoch ms).
  public static func earnsAck(arrivedAt: Int64, pulledAt: Int64) -> Bool {
    pulledAt - arrivedAt <= pullWindowMs
  }

  /// The oldest arrival a pull at `pulledAt` still ACKs (epoch ms): messages stored at or after it.
  public static func oldestAckedArrival(pulledAt: Int64) -> Int64 { pulledAt - pullWindowMs }

  /// Whether an ACK earned by a pull at `pulledAt` is still worth sending at `now` (epoch ms): a listener that was
  /// down longer than the window drops it (the sender stopped retrying long ago).
  public static func stillWorthSending(pulledAt: Int64, now: Int64) -> Bool {
    now - pulledAt <= pullWindowMs
  }
}
