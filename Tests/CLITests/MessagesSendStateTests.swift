import Foundation
import Store
import Testing

/// `aprs-cloud messages STATION` shows the messages a station sent through `/v1/send` with their state.
@Suite struct MessagesSendStateTests {
  @Test func sentMessagesShowTheirStateReceivedOnesNone() throws {
    let fixture = try OpsDatabase()
    try fixture.register("OH7LZB-9", at: fixture.now)
    try fixture.deliver("OH7LZB-9", from: "KJ7ABC-7", "hello", msgno: "5")
    for text in ["first", "second", "third"] {
      let creation = try fixture.database.createSend(
        NewSend(station: "OH7LZB-9", addressee: "KJ7ABC-7", text: text, clientId: nil), limits: SendLimits(),
        now: fixture.now)
      guard case .created = creation else { throw CocoaError(.featureUnsupported) }
    }
    _ = try fixture.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "1", kind: .ack)], now: fixture.now + 10)
    _ = try fixture.database.answerSends(
      [SendAnswer(station: "OH7LZB-9", peer: "KJ7ABC-7", msgno: "2", kind: .rej)], now: fixture.now + 20)

    let result = try runCLI(["messages", "oh7lzb-9", "--db", fixture.path])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 4)
    #expect(lines[0].hasSuffix("Z  from KJ7ABC-7  {5}  hello"))
    #expect(lines[1].hasSuffix("Z  to KJ7ABC-7  {3}  [pending]  third"))
    #expect(lines[2].hasSuffix("Z  to KJ7ABC-7  {1}  [acked]  first"), "re-stamped: after the pending one")
    #expect(lines[3].hasSuffix("Z  to KJ7ABC-7  {2}  [rejected]  second"))
  }
}
