import Foundation
import JSON
import Testing

/// The real stack: nginx with the project's configuration in front of the real `aprs-cloud-fcgi`.
/// A smoke test of the path through both; the API's own behaviour is tested by the Responder* files.
@Suite struct StackTests {
  @Test func healthAnswersThroughNginx() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let health = try stack.get("/health")
    expectAPIAnswer(health, status: 200, isError: false)
    let head = try stack.get("/health", method: "HEAD", arguments: ["--head"])
    #expect(head.status == 200)
  }

  @Test func registerThenSyncThroughNginx() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let register = try stack.post(
      "/v1/register",
      json: #"{"callsign":"n0call","ssid":7,"auth":"13023","ackMessages":false,"wantHistory":true,"since":0}"#
    )
    expectAPIAnswer(register, status: 200, isError: false)
    #expect(register.errorMessage == nil)

    let sync = try stack.post("/v1/sync", json: #"{"callsign":"N0CALL","ssid":7,"auth":"13023","since":0}"#)
    expectAPIAnswer(sync, status: 200, isError: false)
    let object = try #require(sync.jsonObject)
    guard case .array? = object["messages"] else {
      Issue.record("messages is not an array: \(sync.text)")
      return
    }
    guard case .number(let serverTime)? = object["serverTime"] else {
      Issue.record("serverTime is not a number: \(sync.text)")
      return
    }
    #expect(serverTime.int64 != nil, "serverTime is an integer")
  }

  @Test func theResponderErrorsReachTheClientAsJSON() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    let wrongPasscode = try stack.post(
      "/v1/sync", json: #"{"callsign":"N0CALL","ssid":0,"auth":"12345","since":0}"#)
    expectAPIAnswer(wrongPasscode, status: 401)
    let malformed = try stack.post("/v1/register", json: #"{"callsign":"#)
    expectAPIAnswer(malformed, status: 400)
    let unknown = try stack.post("/v1/nope", json: "{}")
    expectAPIAnswer(unknown, status: 404)
  }

  @Test func stoppingTheResponderGives502() throws {
    let stack = try TestStack(.real())
    defer { stack.stop() }
    stack.stopResponder()
    expectAPIAnswer(try stack.post("/v1/sync", json: #"{"callsign":"N0CALL","auth":"13023"}"#), status: 502)
    expectAPIAnswer(try stack.get("/health"), status: 502)
  }
}
