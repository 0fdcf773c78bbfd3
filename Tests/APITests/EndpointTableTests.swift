import CompanionFiles
import Foundation
import Testing

@testable import API

/// The endpoint table (`APIHandler.Endpoint.route`) says who may call each endpoint as docs/design.md "What each
/// caller may do" does, row by row, and what each wakes in the listener.
@Suite struct EndpointTableTests {
  typealias Endpoint = APIHandler.Endpoint

  /// The kind of an endpoint's access rule, as the table says it.
  static func kind(_ endpoint: Endpoint) -> String {
    switch endpoint.route.access {
    case .open: "open"
    case .privateListener: "private"
    case .claimant: "claimant"
    case .caller(.station, _): "station"
    case .caller(.devices, _): "devices"
    case .caller(.owner, _): "owner"
    }
  }

  @Test func whoMayCallEachEndpointIsWhatTheDesignTableSays() throws {
    let design = try String(
      contentsOf: ContractDocumentTests.root.appendingPathComponent("docs/design.md"), encoding: .utf8)
    let rows = design.split(separator: "\n").filter { $0.hasPrefix("| ") }
    func row(_ start: String) throws -> Substring {
      try #require(rows.first { $0.hasPrefix("| " + start) }, "docs/design.md has no row \(start)")
    }
    // Open to the station's devices, keyed or not (the old protocol).
    #expect(try row("register, heartbeat, sync, long poll, avatars").contains("yes (old protocol)"))
    for endpoint in [Endpoint.register, .heartbeat, .sync, .avatars, .unregister] {
      #expect(Self.kind(endpoint) == "station", "\(endpoint)")
    }
    // Read markers: a keyless caller of a claimed station gets a 403.
    #expect(try row("`/v1/read`").contains("| yes | 403 |"))
    #expect(Self.kind(.read) == "devices")
    // The owner's endpoints: each one the row names, and no other.
    let owners = try row("`/v1/settings`").split(separator: "|")[0]
    let named = Set(owners.split(separator: "`").filter { $0.hasPrefix("/v1/") }.map(String.init))
    #expect(named == Set(Endpoint.allCases.filter { Self.kind($0) == "owner" }.map(\.rawValue)))
    #expect(Self.kind(.claim) == "claimant")
    #expect(
      Endpoint.allCases.filter { ["open", "private"].contains(Self.kind($0)) }.map(\.rawValue).sorted()
        == ["/health", "/metrics", "/status", "/v1/info"])
  }

  @Test func theOwnersEndpointsSayWhatNeedsTheKey() {
    var reasons: [Endpoint: String] = [:]
    for endpoint in Endpoint.allCases {
      if case .caller(.owner(let what), _) = endpoint.route.access { reasons[endpoint] = what }
      if case .caller(.devices(let what), _) = endpoint.route.access { reasons[endpoint] = what }
    }
    #expect(
      reasons == [
        .send: "sending messages", .settings: "reading or changing settings",
        .export: "exporting the station",
        .audit: "reading the audit trail", .forwardConfirm: "confirming forward targets",
        .read: "marking messages read",
      ])
  }

  @Test func methodsAndWakesAreTheTablesOwn() {
    for endpoint in Endpoint.allCases {
      let route = endpoint.route
      switch endpoint {
      case .health, .status: #expect(route.methods == ["GET", "HEAD"] && route.allow == "GET")
      case .metrics: #expect(route.methods == ["GET"] && route.allow == "GET")
      case .info: #expect(route.methods == ["GET", "HEAD", "POST"])
      default: #expect(route.methods == ["POST"] && route.allow == "POST", "\(endpoint)")
      }
    }
    let wakes: [Endpoint: [ListenerWake]] = Dictionary(
      uniqueKeysWithValues: Endpoint.allCases.compactMap { endpoint in
        endpoint.route.wakes.isEmpty ? nil : (endpoint, endpoint.route.wakes)
      })
    // Settings also wake the sends: a net's join or leave goes out within a second.
    #expect(
      wakes == [
        .register: [.registrations], .heartbeat: [.registrations], .unregister: [.registrations],
        .settings: [.registrations, .sends], .claim: [.registrations], .send: [.sends],
      ])
  }
}
