import Platform
import Store
import Testing

/// The attacks on the delivery slots (docs/design.md "Fair delivery slots"), end to end: an in-process push sender
/// against the forward fake, whose receivers answer the flood's requests 20 s late. Before the slots, seven
/// stations' slow webhooks held every forward slot and eleven stations' slow UnifiedPush endpoints on seven ports of
/// one host held every push slot, so an unrelated delivery waited 25 s and more; now it arrives within 3 s.
@Suite(.serialized) struct FairDeliveryServiceTests {
  /// How long an unrelated delivery may take under the flood, ms.
  static let boundMs = 3_000

  @Test func sevenStationsWithSlowWebhooksDoNotDelayAnotherStationsForward() throws {
    let rig = try ForwardRig()
    defer { rig.close() }
    for number in 1...7 {
      let station = "N\(number)ABC"
      try rig.register(station)
      let paths = (1...5).map { "/slow/\(number)/\($0)" }
      try rig.targets(station, paths.map { rig.webhook($0, always: true) })
      for path in paths { try rig.fake.script(path, status: 200, times: 20, delayMs: 20_000) }
    }
    try rig.register("N0CALL-8")
    // The unrelated target is elsewhere than the flood's network (a name, not 127.0.0.1), as a station's own
    // ntfy server or webhook is.
    try rig.targets(
      "N0CALL-8",
      [
        ForwardDraft(
          kind: .webhook, address: rig.fake.url("/quick", host: "localhost"), secret: ForwardRig.secret)
      ])
    try rig.start()
    for number in 1...7 { try rig.store("N\(number)ABC", ["flood 1", "flood 2", "flood 3"]) }
    // The flood is on the wire (at most its network's cap of it, 8; over HTTP/1.1 one connection per origin, so
    // the fake sees them one at a time).
    #expect(try rig.fake.wait(count: 1), "\(rig.log())")
    let started = monotonicMilliseconds()
    try rig.store("N0CALL-8", ["an unrelated message"])
    #expect(try rig.fake.wait(path: "/quick", count: 1, timeoutMs: Self.boundMs), "\(rig.log())")
    #expect(monotonicMilliseconds() - started <= Int64(Self.boundMs))
  }

  @Test func elevenStationsWithSlowUnifiedPushEndpointsOnSevenPortsDoNotDelayAnotherStationsPush() throws {
    let rig = try ForwardRig(webPush: true, extraHTTPSPorts: 6)
    defer { rig.close() }
    let ports = [rig.fake.httpsPort] + rig.fake.extraPorts
    #expect(ports.count == 7)
    for number in 1...11 {
      let station = "N\(number)XYZ"
      for device in 1...10 {
        let path = "/up/\(number)/\(device)"
        try rig.fake.script(path, status: 200, times: 5, delayMs: 20_000)
        try rig.registerDevice(
          station,
          endpoint: rig.fake.url(path, host: "127.0.0.1", port: ports[(number + device) % ports.count]),
          keyed: false)
      }
    }
    try rig.registerDevice(
      "N0CALL-8", endpoint: rig.fake.url("/up/victim", host: "localhost"), keyed: false)
    try rig.start()
    for number in 1...11 { try rig.store("N\(number)XYZ", ["flood"]) }
    // The flood is on the wire (at most its host's cap of it, whatever the port: 16; over HTTP/1.1 one connection
    // per port, so the fake sees one per port at a time).
    #expect(try rig.fake.wait(count: 7), "\(rig.log())")
    let started = monotonicMilliseconds()
    try rig.store("N0CALL-8", ["an unrelated message"])
    #expect(try rig.fake.wait(path: "/up/victim", count: 1, timeoutMs: Self.boundMs), "\(rig.log())")
    #expect(monotonicMilliseconds() - started <= Int64(Self.boundMs))
  }
}
