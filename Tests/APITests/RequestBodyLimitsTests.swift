import API
import Foundation
import JSON
import Testing

/// The JSON parser's key rules and caps as the API answers them: one 400 with the parser's sentence.
@Suite struct RequestBodyLimitsTests {
  /// A valid register body with `extra` raw members (JSON text without braces) in front of its own.
  private func register(with extra: String) -> String {
    let data = try! JSONSerialization.data(withJSONObject: registerBody(), options: [.sortedKeys])
    return "{" + extra + "," + String(decoding: data, as: UTF8.self).dropFirst()
  }

  private func keys(_ count: Int) -> String {
    (0..<count).map { #""x\#($0)":0"# }.joined(separator: ",")
  }

  @Test func keysEqualOnlyUnderUnicodeEquivalenceAreAccepted() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", register(with: #""\u0300":1,"\u0340":2"#))
    #expect(reply.status == 200, "\(reply.text)")
  }

  @Test func anEscapedDuplicateOfAKnownKeyIsA400() throws {
    let api = try APIFixture()
    let reply = api.post("/v1/register", register(with: #""c\u0061llsign":"W5AGO""#))
    #expect(reply.status == 400)
    #expect(reply.error == #"body has the key "callsign" more than once"#)
  }

  @Test func tooManyMembersIsA400NamingTheLimit() throws {
    let api = try APIFixture()
    let room = JSONParser.defaultMaxMembers - registerBody().count
    let full = api.post("/v1/register", register(with: keys(room)))
    #expect(full.status == 200, "\(full.text.prefix(200))")
    let over = api.post("/v1/register", register(with: keys(room + 1)))
    #expect(over.status == 400)
    #expect(over.error == "body has an object with more than 1024 members")
    let body = register(with: keys(6_000))  // about 60 KB, under the API's 64 KB body limit
    #expect(body.utf8.count > 55_000 && body.utf8.count < 65_536)
    let wide = api.post("/v1/register", body)
    #expect(wide.status == 400)
    #expect(wide.error == "body has an object with more than 1024 members")
  }
}
