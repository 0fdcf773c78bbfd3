import Foundation
import Testing

@testable import API

/// docs/openapi.yaml names exactly the routes the router serves on the public server: every path and method
/// `APIHandler` answers with anything but its "no such endpoint" 404 or a 405, and nothing else. What is served is
/// asked of the handler itself (`/metrics` and `/status` answer 404 off the private metrics listener, so they are
/// not the public API's), never listed by hand. Tests/openapi/test_openapi.py checks the file as OpenAPI 3.1.
@Suite struct OpenAPIRoutesTests {
  /// The HTTP methods an OpenAPI path item may hold (OpenAPI 3.1 §4.8.9), upper case.
  static let methods = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE"]

  static var documentURL: URL {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("docs/openapi.yaml")
  }

  /// The operations an OpenAPI document in this file's block style names, path → methods (upper case): under the
  /// top-level `paths:`, each key indented 2 spaces is a path, each method key indented 4 under it an operation.
  static func documentedRoutes(_ text: String) -> [String: Set<String>] {
    var routes: [String: Set<String>] = [:]
    var inPaths = false
    var path: String?
    for raw in text.split(separator: "\n", omittingEmptySubsequences: false) {
      let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
      let trimmed = line.drop { $0 == " " }
      if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
      let indent = line.count - trimmed.count
      if indent == 0 {
        inPaths = trimmed == "paths:"
        path = nil
        continue
      }
      guard inPaths, let colon = trimmed.firstIndex(of: ":") else { continue }
      var key = String(trimmed[..<colon])
      if key.count >= 2, let first = key.first, first == "'" || first == "\"", key.last == first {
        key = String(key.dropFirst().dropLast())
      }
      if indent == 2 {
        path = key.hasPrefix("/") ? key : nil
        if let path { routes[path, default: []] = routes[path] ?? [] }
      } else if indent == 4, let path, methods.contains(key.uppercased()), key == key.lowercased() {
        routes[path, default: []].insert(key.uppercased())
      }
    }
    return routes
  }

  /// Whether the handler serves `method` on `path` to a client of the public server: it answers anything but its
  /// "no such endpoint" 404 or a 405 (an empty body: a POST endpoint answers 400 for it, still served).
  static func serves(_ api: APIFixture, _ method: String, _ path: String) -> Bool {
    let response = api.handler.handle(APIRequest(method: method, path: path, body: []))
    if response.status == 405 { return false }
    let unknown = APIResponse.error(.notFound(path: path))
    return !(response.status == 404 && response.body == unknown.body)
  }

  /// The routes the router serves, path → methods, among the endpoints it knows and the paths `also` names.
  static func servedRoutes(_ api: APIFixture, also paths: some Sequence<String>) -> [String: Set<String>] {
    var routes: [String: Set<String>] = [:]
    for path in Set(APIHandler.Endpoint.allCases.map(\.rawValue)).union(paths) {
      let served = Set(methods.filter { serves(api, $0, path) })
      if !served.isEmpty { routes[path] = served }
    }
    return routes
  }

  /// What differs between the document and the router, one line each (empty: they agree).
  static func differences(documented: [String: Set<String>], served: [String: Set<String>]) -> [String] {
    var lines: [String] = []
    for path in Set(documented.keys).union(served.keys).sorted() {
      let named = documented[path] ?? []
      let answered = served[path] ?? []
      for method in answered.subtracting(named).sorted() {
        lines.append("\(method) \(path) is served but missing from docs/openapi.yaml")
      }
      for method in named.subtracting(answered).sorted() {
        lines.append("\(method) \(path) is in docs/openapi.yaml but the router does not serve it")
      }
    }
    return lines
  }

  @Test func theDocumentNamesEveryRouteTheRouterServesAndNoOther() throws {
    let text = try String(contentsOf: Self.documentURL, encoding: .utf8)
    let documented = Self.documentedRoutes(text)
    #expect(documented.count >= 14, "docs/openapi.yaml: \(documented.keys.sorted())")
    let api = try APIFixture()
    let served = Self.servedRoutes(api, also: documented.keys)
    #expect(Self.differences(documented: documented, served: served) == [])
    // The private listener's pages are not the public API: off that listener they are unknown paths.
    #expect(served["/metrics"] == nil && served["/status"] == nil)
    #expect(served["/v1/info"] == ["GET", "HEAD", "POST"])
  }

  @Test func aRouteLeftOutOrMadeUpIsNamed() throws {
    let api = try APIFixture()
    var documented = Self.servedRoutes(api, also: [])
    documented["/v1/send"] = nil
    documented["/v1/info"]?.remove("HEAD")
    documented["/v1/messages", default: []].insert("POST")
    documented["/v1/sync", default: []].insert("GET")
    let served = Self.servedRoutes(api, also: documented.keys)
    #expect(
      Self.differences(documented: documented, served: served) == [
        "HEAD /v1/info is served but missing from docs/openapi.yaml",
        "POST /v1/messages is in docs/openapi.yaml but the router does not serve it",
        "POST /v1/send is served but missing from docs/openapi.yaml",
        "GET /v1/sync is in docs/openapi.yaml but the router does not serve it",
      ])
  }

  @Test func theReaderTakesPathsAndTheirMethodsOnly() {
    let text = """
      openapi: 3.1.0
      info:
        title: t
      paths:
        /v1/a:
          post:
            summary: a
            responses:
              '200': {description: ok}
        '/v1/b':
          get: {}
          head: {}
          parameters: []
        # a comment

        /health:
          description: no operation
      components:
        schemas:
          /v1/c:
            post: {}
      """
    #expect(
      Self.documentedRoutes(text) == ["/v1/a": ["POST"], "/v1/b": ["GET", "HEAD"], "/health": []])
  }
}
