@testable import Push
@testable import Store

/// Jobs and targets the delivery and channel tests share.
enum DeliveryTestJobs {
  static let message = StoredMessage(
    direction: .received, peer: "KJ7ABC-7", text: "Hello from the trail", msgno: "12",
    timestamp: 1_796_198_150_000, to: "N0CALL-9")

  static func entry(_ id: Int64 = 1) -> OutboxEntry {
    OutboxEntry(
      id: id, station: "N0CALL-9", messageID: id, message: message, createdAt: 0, attempts: 0,
      nextAttemptAt: 0)
  }

  static func target(_ kind: ForwardKind, address: String, secret: String? = nil, id: String = "t1")
    -> ForwardTarget
  {
    ForwardTarget(station: "N0CALL-9", id: id, kind: kind, address: address, secret: secret)
  }

  static func forward(_ target: ForwardTarget, id: Int = 1, purpose: DeliveryPurpose = .batch(1))
    -> DeliveryJob
  {
    DeliveryJob(id: id, purpose: purpose, recipient: .target(target), entry: entry())
  }

  static func device(_ token: String, platform: DevicePlatform = .android) -> DeviceRecord {
    DeviceRecord(token: token, station: "N0CALL-9", platform: platform, registeredAt: 0, refreshedAt: 0)
  }
}
