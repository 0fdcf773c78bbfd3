import JSON
import Store

/// One device's answer to a test notification.
public struct PushTestResult: Sendable, Equatable {
  /// The device's platform.
  public var platform: DevicePlatform
  /// The token, shortened.
  public var token: String
  /// The provider's HTTP status, nil when the push was not sent.
  public var status: Int?
  /// `accepted` (with FCM's message name), or the provider's reason, or why it was not sent.
  public var reason: String
  /// Whether the provider accepted it.
  public var accepted: Bool
  /// The device was not refreshed within the station expiry (real pushes skip it).
  public var expired: Bool
}

/// `aprs-cloud push-test`: sends one test notification to every device of a station and
/// reports each provider's answer. Nothing in the database is changed (a dead token is
/// reported, and the push sender deletes it on the next real push, nor an APNs environment
/// remembered). The APNs provider token file (`PushServiceOptions.apnsTokenFile`) is reused or
/// refreshed like the sender does: run it as the listener's user to share its token.
public enum PushTester {
  /// Sends and waits for every answer (at most `timeoutMs`). Throws when the database cannot
  /// be opened; the provider states say which providers could send.
  public static func run(station: String, options: PushServiceOptions, timeoutMs: Int64 = 60_000)
    throws(PushError) -> (states: [DevicePlatform: ProviderState], results: [PushTestResult])
  {
    let database: Database
    let devices: [DeviceRecord]
    do throws(StoreError) {
      database = try Database(path: options.databasePath, options: options.storeOptions)
      try database.checkSchema()
      devices = try database.devices(of: station)
    } catch {
      throw PushError("cannot read the database \(options.databasePath): \(error)")
    }
    defer { database.close() }
    var shown = options.push
    shown.preview = true
    var setup = ChannelSetup(
      shown, logger: options.logger, apnsTokenFile: options.apnsTokenFile,
      vapidKeyFile: options.vapidKeyFile)
    let http = try CurlMulti()
    defer { http.close() }
    let now = options.clock()
    let content = PushContent(
      station: devices.first?.station ?? station, fromCall: devices.first?.station ?? station, seqId: nil,
      text: "Test notification from aprs-cloud", count: 1)
    var results: [PushTestResult?] = Array(repeating: nil, count: devices.count)
    var waiting = 0
    let expiresAt = now + options.push.maxAgeMs
    for (index, device) in devices.enumerated() {
      let expired = device.refreshedAt < now - options.stationExpiryMs
      var result = PushTestResult(
        platform: device.platform, token: redactedToken(device.token), status: nil, reason: "",
        accepted: false,
        expired: expired)
      let platform = device.platform
      guard let client = setup.clients[platform], setup.states[platform] == .ok else {
        result.reason = "not sent: \(platform.rawValue) push is \(setup.states[platform] ?? .off("off"))"
        results[index] = result
        continue
      }
      // Always with the text: the operator asked to see it arrive.
      let (built, headers) = client.body(
        content, for: device, expiresAt: expiresAt, ttlSeconds: options.push.maxAgeMs / 1000)
      guard case .success(let payload) = built else {
        result.reason = "not sent: payload too large"
        results[index] = result
        continue
      }
      results[index] = result
      client.enqueue(
        DeliveryJob(
          id: index, purpose: .batch(index), recipient: .device(device), payload: payload.bytes,
          headers: headers))
      waiting += 1
    }

    var tags = 0
    let deadline = options.clock() + timeoutMs
    func record(_ outcome: DeliveryOutcome) {
      guard let index = outcome.job.purpose.batchID, var result = results[index], result.reason.isEmpty else {
        return
      }
      waiting -= 1
      result.status = outcome.response.map(\.status)
      switch outcome.decision {
      case .delivered:
        result.accepted = true
        result.reason = "accepted"
        if case .object(let body)? = try? JSONParser.parse(outcome.response?.body ?? []),
          case .string(let name)? = body["name"]
        {
          result.reason += " (\(name))"
        }
      case .gone(let reason, _): result.reason = reason + " (the token is dead)"
      case .retry(_, let reason), .giveUp(let reason), .reauthenticate(let reason): result.reason = reason
      case .stopProvider(let reason):
        result.reason = (result.status == nil ? "not sent: " : "") + "provider stopped: " + reason
        setup.states[outcome.job.device.platform] = .stopped(reason)
      }
      results[index] = result
    }
    while waiting > 0, options.clock() < deadline {
      let now = options.clock()
      for (tag, response) in http.perform() {
        for client in setup.clients.values {
          if let outcomes = client.handle(tag: tag, response: response, now: now) {
            outcomes.forEach(record)
            break
          }
        }
      }
      for client in setup.clients.values {
        client.pump(now: now, http: http, tags: &tags).forEach(record)
      }
      if waiting > 0 { http.wait(timeoutMs: 100) }
    }
    for (index, result) in results.enumerated() where result?.reason.isEmpty == true {
      results[index]?.reason = "no answer within \(timeoutMs / 1000) s"
    }
    return (setup.states, results.compactMap { $0 })
  }
}
