import API
import Foundation
import JSON
import TestSupport
import Testing

/// Every field of every endpoint, top level and nested, given the numbers that break arithmetic: the 64-bit
/// extremes (`abs(Int64.min)` and `-Int64.min` trap), just past them, huge and tiny doubles. The answer is
/// always a JSON status below 500, never a trap: a trap here would end the test process, and in the responder
/// it ends every request in flight and every parked long poll.
@Suite struct ExtremeNumberTests {
  static let extremes = [
    "-9223372036854775808", "9223372036854775807", "-9223372036854775809", "18446744073709551616", "-1", "0",
    "4294967296", "-4294967296", "1e308", "-1e308", "1e-320", "-0.0", "2147483648", "-2147483649",
  ]
  static let endpoints = [
    "/v1/register", "/v1/heartbeat", "/v1/sync", "/v1/unregister", "/v1/avatars", "/v1/send", "/v1/settings",
  ]
  static let fields = [
    "ssid", "auth", "since", "wait", "wantHistory", "ackMessages", "platform", "pushToken", "pushKeys",
    "avatarUpdate", "avatarIcon", "avatarImage", "stations", "to", "text", "clientId", "blocked",
    "mutedUntil",
    "quietHours", "quietBypass", "ackPolicy",
  ]
  static let nested = [
    ("quietHours", ["start": "60", "end": "70", "utcOffsetMinutes": "0"]),
    ("pushKeys", ["p256dh": "\"x\"", "auth": "\"y\""]),
  ]

  private func expectAnswered(_ api: APIFixture, _ endpoint: String, _ body: String) {
    let reply = api.post(endpoint, body)
    #expect(reply.status < 500 || reply.status == 503, "\(endpoint) \(body): \(reply.text)")
    #expect(reply.object != nil, "\(endpoint) \(body): not JSON: \(reply.text)")
  }

  @Test func everyFieldAndEndpointAnswersExtremeNumbersWithoutATrap() throws {
    let api = try APIFixture()
    let registered = api.post("/v1/register", #"{"callsign":"N0CALL","ssid":7,"auth":"13023"}"#)
    #expect(registered.status == 200, "\(registered.text)")
    let identity = #""callsign":"N0CALL","ssid":7,"auth":"13023""#
    for endpoint in Self.endpoints {
      for number in Self.extremes {
        for field in Self.fields {
          expectAnswered(api, endpoint, "{\(identity),\"\(field)\":\(number)}")
          // Inside an array too (`stations`, `blocked`, …).
          expectAnswered(api, endpoint, "{\(identity),\"\(field)\":[\(number)]}")
        }
        for (field, members) in Self.nested {
          for member in members.keys {
            var object = members
            object[member] = number
            let text = object.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }
              .joined(separator: ",")
            expectAnswered(api, endpoint, "{\(identity),\"\(field)\":{\(text)}}")
          }
        }
      }
    }
    #expect(try api.database.integrityCheck() == "ok")
  }
}
