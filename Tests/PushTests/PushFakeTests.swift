import JSON
import Testing

/// The `PushFake` helpers the sender's tests use: named answers per token, APNs environments and
/// the request log's filters, driven by the real sender. Only what the fake answered and recorded
/// is checked here (what the sender then decides is `PushServiceTests`' business).
@Suite struct PushFakeTests {
  @Test func namedAnswersPerTokenAndEnvironmentsReachTheSender() throws {
    let rig = try PushRig(android: false)
    defer { rig.close() }
    #expect(rig.fake.sandboxPort > 0 && rig.fake.sandboxPort != rig.fake.port)
    #expect(rig.fake.apnsSandboxEndpoint == "https://localhost:\(rig.fake.sandboxPort)")
    let (sandbox, gone, plain) = (apnsToken(1), apnsToken(2), apnsToken(3))
    try rig.register("N0CALL-7", [(.ios, sandbox), (.ios, gone), (.ios, plain)])
    try rig.fake.tokens(production: [plain], sandbox: [sandbox])
    // A literal JSON.stringify would not write (the absurd ones, 1e400 and the like, are for the
    // parser's own tests).
    try rig.fake.script("apns", token: gone, answer: "Unregistered", #""timestampRaw":"1700000000000.0""#)
    try rig.start()
    try rig.store("N0CALL-7", ["hello"])
    #expect(try rig.fake.wait("apns", count: 3))

    // The rig's sender tries production first: the sandbox token is refused there (and then
    // accepted by the sandbox).
    let refused = try #require(try rig.fake.requests("apns", token: sandbox).first)
    #expect(refused.int(at: ["status"]) == 400)
    #expect(refused.string(at: ["response", "reason"]) == "BadDeviceToken")
    #expect(refused.string(at: ["environment"]) == "production")
    let unregistered = try #require(try rig.fake.requests("apns", token: gone.uppercased()).first)
    #expect(unregistered.int(at: ["status"]) == 410)
    let sent = #"{"reason":"Unregistered","timestamp":1700000000000.0}"#
    #expect(unregistered.string(at: ["responseText"]) == sent)
    #expect(unregistered.string(at: ["scripted", "answer"]) == "Unregistered")
    let delivered = try #require(try rig.fake.requests("apns", token: plain).first)
    #expect(delivered.int(at: ["status"]) == 200)
    #expect(delivered.string(at: ["headers", "apns-push-type"]) == "alert")
    #expect(delivered.string(at: ["headers", "apns-collapse-id"]) != nil)
    #expect(delivered.value(at: ["body", "aps"]) != nil)
    #expect(try rig.fake.requests("apns", environment: "production").count == 3)
    #expect(try rig.fake.wait("apns", count: 4))
    let sandboxed = try rig.fake.requests(environment: "sandbox")
    #expect(sandboxed.count == 1 && sandboxed.first?.string(at: ["deviceToken"]) == sandbox)
    #expect(sandboxed.first?.int(at: ["status"]) == 200)
    #expect(try rig.fake.requests().count >= 3)
  }
}
