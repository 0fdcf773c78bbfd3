/// The `gcm.message_id` of APNs payloads: unique per push, across restarts too.
///
/// `<16 hex digits chosen at random when the sender starts>:<a counter>`, for example
/// `3f9c0a1b2c3d4e5f:17`. FlutterFire only needs the key to be there; a unique value keeps each push
/// distinct to anything on the phone that looks at it, as FCM's own message ids are.
struct PushMessageIDs {
  private let prefix: String
  private var counter: UInt64 = 0

  /// A new sequence; `seed` (tests) fixes the random part.
  init(seed: UInt64 = UInt64.random(in: 0...UInt64.max)) {
    let hex = String(seed, radix: 16)
    prefix = String(repeating: "0", count: 16 - hex.count) + hex
  }

  /// The next id.
  mutating func next() -> String {
    counter &+= 1
    return prefix + ":" + String(counter)
  }
}
