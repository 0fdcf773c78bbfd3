import Foundation
import TestSupport
import Testing

/// `aprs-cloud ban` and `unban` on a running stack (nginx, the real responder, the listener on the APRS-IS fake):
/// a banned sender's message is neither stored, pushed nor ACKed, a banned address gets 403 through nginx, and
/// `status`, `ban --list` and `/metrics` show the bans; lifted, everything flows again.
@Suite struct BanEndToEndTests {
  @Test func aBannedCallAndABannedAddressEndToEnd() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let aprsis = try FakeAPRSIS()
    defer { aprsis.stop() }
    let register =
      #"{"callsign":"N0CALL","ssid":7,"auth":"13023","ackMessages":true,"wantHistory":false,"since":0}"#
    #expect(try stack.post("/v1/register", json: register).status == 200)
    let listener = try ListenerProcess(
      database: stack.databasePath, config: ListenerProcess.config(fake: aprsis))
    defer { listener.stop() }
    try #require(try aprsis.wait("login", count: 1), "no login:\n\(listener.log)")
    let database = SQLiteFile(path: stack.databasePath)
    try #require(try database.waitUntil { try $0.meta("connected") == "1" }, "\(listener.log)")
    let db = ["--db", stack.databasePath]

    let banned = try runCLI(["ban", "OH7AA", "--reason", "flooding the net", "--for", "1h"] + db)
    #expect(
      banned.status == 0 && banned.stdoutText.hasPrefix("banned call OH7AA until "), "\(banned.stderrText)")
    let address = try runCLI(["ban", "127.0.0.2"] + db)
    #expect(
      address.status == 0 && address.stdoutText.contains("banned address 127.0.0.2/32"),
      "\(address.stderrText)")
    let list = try runCLI(["ban", "--list"] + db)
    #expect(
      list.stdoutText.contains("OH7AA") && list.stdoutText.contains("flooding the net"), "\(list.stdoutText)")
    #expect(list.stdoutText.contains("127.0.0.2/32"))
    let status = try runCLI(["status"] + db)
    #expect(
      status.stdoutText.contains("bans       2 in force: call OH7AA, address 127.0.0.2/32"),
      "\(status.stdoutText)")

    // The banned sender (any SSID) and an ordinary one, in that order: only the second is stored and ACKed.
    _ = try aprsis.inject([
      "OH7AA-1>APRS,TCPIP*,qAC,T2TEST::N0CALL-7 :spam{1", "OH7BB>APRS,TCPIP*,qAC,T2TEST::N0CALL-7 :hello{2",
    ])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 1 }, "\(listener.log)")
    #expect(try database.run("SELECT peer FROM messages;") == "OH7BB\n")
    #expect(try database.run("SELECT count(*) FROM outbox;") == "1\n", "one push, for the second message")
    #expect(try aprsis.wait("transmitted", count: 1), "\(listener.log)")
    #expect(try aprsis.ackLines().map { $0.hasSuffix(":ack2") } == [true], "no ACK for the banned sender")

    // The banned address through nginx: 403 with a JSON error; info still answers; other addresses are served.
    let refused = try stack.post("/v1/sync", json: register, arguments: ["--interface", "127.0.0.2"])
    expectAPIAnswer(refused, status: 403)
    #expect(refused.errorMessage?.contains("127.0.0.2/32 are banned") == true, "\(refused.text)")
    #expect(try stack.get("/v1/info", arguments: ["--interface", "127.0.0.2"]).status == 200)
    #expect(try stack.post("/v1/sync", json: register).status == 200)

    let metrics = try PrometheusDocument(parsing: try stack.metrics().text)
    #expect(metrics.value("aprs_cloud_bans", ["kind": "call"]) == 1)
    #expect(metrics.value("aprs_cloud_bans", ["kind": "address"]) == 1)
    try #require(
      try database.waitUntil { try $0.meta("banned") == "1" }, "the listener published the drop")
    let after = try PrometheusDocument(parsing: try stack.metrics().text)
    #expect(after.value("aprs_cloud_listener_messages_total", ["outcome": "banned"]) == 1)

    // Lifted: the sender's next message is stored and the address served.
    #expect(try runCLI(["unban", "OH7AA"] + db).status == 0)
    #expect(try runCLI(["unban", "127.0.0.2"] + db).status == 0)
    let again = try runCLI(["unban", "127.0.0.2"] + db)
    #expect(
      again.status == 1 && again.stderrText.contains("no ban on address 127.0.0.2/32"), "\(again.stderrText)")
    _ = try aprsis.inject(["OH7AA-1>APRS,TCPIP*,qAC,T2TEST::N0CALL-7 :now heard{3"])
    #expect(try database.waitUntil { try $0.int("SELECT count(*) FROM messages") == 2 }, "\(listener.log)")
    #expect(
      try stack.post("/v1/sync", json: register, arguments: ["--interface", "127.0.0.2"]).status == 200)
    #expect(try runCLI(["ban", "--list"] + db).stdoutText == "no bans in force\n")
    let bad = try runCLI(["ban", "not a target"] + db)
    #expect(bad.status == 1 && bad.stderrText.contains("is neither a call"), "\(bad.stderrText)")
  }
}
