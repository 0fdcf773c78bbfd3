import Foundation
import Testing

@testable import Listener

/// The listener's threads (``ListenerThread``) are the table docs/architecture.md "The listener's threads" shows,
/// row for row, and every thread of the listener starts through it.
@Suite struct ListenerThreadTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test func theArchitectureTableNamesEveryThreadAndNoOther() throws {
    let text = try String(
      contentsOf: Self.root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
    let section = try #require(text.components(separatedBy: "## The listener's threads").dropFirst().first)
    let body = section.components(separatedBy: "\n## ").first ?? section
    let names = body.split(separator: "\n").filter { $0.hasPrefix("| `") }.map {
      String($0.dropFirst(3).prefix { $0 != "`" })
    }
    #expect(names == ListenerThread.allCases.map(\.rawValue))
  }

  @Test func everyThreadOfTheListenerStartsThroughTheTable() throws {
    let folder = Self.root.appendingPathComponent("Sources/Listener").path
    for file in try FileManager.default.contentsOfDirectory(atPath: folder)
    where file.hasSuffix(".swift") && file != "ListenerThread.swift" {
      let source = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
      #expect(!source.contains("startThread("), "\(file) starts a thread outside ListenerThread")
    }
  }
}
