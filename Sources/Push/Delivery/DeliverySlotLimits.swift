/// The bounds of ``DeliverySlots`` (docs/design.md "Fair delivery slots"). The defaults are the numbers the
/// design's rule was checked against; every count is of requests on the wire at once.
struct DeliverySlotLimits: Sendable, Equatable {
  /// One lane's bounds.
  struct Lane: Sendable, Equatable {
    /// Requests on the wire in the lane at most.
    var total: Int
    /// Of `total`, the slots only privileged requests may take (trusted, or to a group with fast answers
    /// lately): requests that are neither are started only while fewer than `total - reserved` of them are
    /// on the wire.
    var reserved: Int
    /// Requests on the wire for one station at most.
    var perStation: Int
    /// Requests on the wire to one endpoint group at most, trusted ones not counted.
    var perGroup: Int
    /// Requests on the wire to one recipient at most; nil for no cap.
    var perRecipient: Int?

    init(total: Int, reserved: Int, perStation: Int, perGroup: Int, perRecipient: Int?) {
      precondition(total > 0 && (0..<total).contains(reserved), "a lane needs a share outside the reserve")
      precondition(perStation > 0 && perGroup > 0 && (perRecipient ?? 1) > 0, "caps must be positive")
      self.total = total
      self.reserved = reserved
      self.perStation = perStation
      self.perGroup = perGroup
      self.perRecipient = perRecipient
    }
  }

  /// Pushes to Web Push and UnifiedPush endpoints: 200 on the wire (the two clients each allowed 100 before; FCM
  /// and APNs keep their own 100 each, known services no station can aim elsewhere), a quarter reserved, so
  /// endpoints nobody vouches for hold 150 at most. 16 per station: a message wakes every device of a station at once (10 owner devices and 3 keyless
  /// ones by default). 16 per group: what one Web Push origin was allowed before, now one network or domain
  /// whatever its ports. No per-device cap (the coalescer already makes one push of a burst).
  var push = Lane(total: 200, reserved: 50, perStation: 16, perGroup: 16, perRecipient: nil)
  /// Forwards: 32 on the wire (as before), a quarter reserved. 1 per target (a target gets its messages in
  /// order, as before). 3 per station: a station has at most 5 targets (`ForwardTarget.maximumPerStation`),
  /// and seven stations at their cap (21) still leave 3 of the unreserved 24 free. 8 per group: one domain
  /// (a popular ntfy server is one) serves many stations, at a few hundred ms a forward, 8 at once is more
  /// than `[forward] perMinute` (600) needs.
  var forward = Lane(total: 32, reserved: 8, perStation: 3, perGroup: 8, perRecipient: 1)

  /// The whole request's limit (connect and answer) for an endpoint that is neither trusted nor fast
  /// lately, ms (3 s: a healthy endpoint connects and answers well within it; a slow one holds a slot no
  /// longer). The sender must apply it to connect and answer together (`CURLOPT_TIMEOUT_MS` and
  /// `CURLOPT_CONNECTTIMEOUT_MS`).
  var shortTimeoutMs = 3_000
  /// The normal limit of an HTTPS request, ms: `HTTPRequest.timeoutMs`'s default (30 s).
  var httpsTimeoutMs = 30_000
  /// The normal limit of a mail, ms: `MailRequest.timeoutMs`'s default (60 s).
  var smtpTimeoutMs = 60_000

  init() {}

  /// The lane's bounds.
  subscript(lane: DeliveryLane) -> Lane {
    switch lane {
    case .push: push
    case .forward: forward
    }
  }

  /// The normal limit of a request over `transport`, ms.
  func normalTimeoutMs(_ transport: DeliveryTransport) -> Int {
    switch transport {
    case .https: httpsTimeoutMs
    case .smtp: smtpTimeoutMs
    }
  }
}
