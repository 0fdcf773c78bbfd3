import API
import Foundation
import Testing

/// The documents in the repository stay in step with the code: docs/protocol.md states the protocol version
/// `/v1/info` answers, as the newest of its "Versions", and every section a comment in Sources or Tests cites
/// (`docs/NAME.md`, then the section's name in double quotes) is a heading of that document, so a reader who
/// follows a citation finds it; no comment points at a document outside the repository.
@Suite struct ContractDocumentTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func text(_ path: String) throws -> String {
    try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
  }

  /// The headings of a Markdown text, without their `#`s.
  static func headings(_ text: String) -> [String] {
    text.split(separator: "\n").compactMap { line in
      guard line.hasPrefix("#") else { return nil }
      return line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
    }
  }

  @Test func theProtocolDocumentStatesTheVersionInfoAnswers() throws {
    let document = try Self.text("docs/protocol.md")
    #expect(document.contains("Protocol version **\(ServerInfo.protocolVersion)**"))
    #expect(document.contains(#""protocolVersion":"\#(ServerInfo.protocolVersion)""#))
    let headings = Self.headings(document)
    let versions = try #require(headings.firstIndex(of: "Versions"))
    // The newest version comes first under "Versions".
    #expect(headings.dropFirst(versions + 1).first == ServerInfo.protocolVersion, "\(headings)")
  }

  /// The Swift files of Sources and Tests, with their text.
  static func swiftFiles() throws -> [(url: URL, text: String)] {
    var files: [(url: URL, text: String)] = []
    for folder in ["Sources", "Tests"] {
      let base = root.appendingPathComponent(folder)
      guard let walker = FileManager.default.enumerator(at: base, includingPropertiesForKeys: nil) else {
        continue
      }
      for case let url as URL in walker where url.pathExtension == "swift" {
        files.append((url, try String(contentsOf: url, encoding: .utf8)))
      }
    }
    return files
  }

  /// `docs/NAME.md "Section"` citations in the sources and tests, by the document they name.
  static func citations() throws -> [String: Set<String>] {
    let pattern = try NSRegularExpression(pattern: #"(docs/[a-z-]+\.md),? "([^"]+)""#)
    var found: [String: Set<String>] = [:]
    for (_, text) in try swiftFiles() {
      let range = NSRange(text.startIndex..., in: text)
      for match in pattern.matches(in: text, range: range) {
        guard let document = Range(match.range(at: 1), in: text),
          let name = Range(match.range(at: 2), in: text)
        else { continue }
        // A name a comment wraps across lines: its words, one space apart.
        let words = text[name].split(whereSeparator: \.isWhitespace).filter { $0 != "///" && $0 != "//" }
        found[String(text[document]), default: []].insert(words.joined(separator: " "))
      }
    }
    return found
  }

  @Test func everyCitedSectionIsAHeading() throws {
    let citations = try Self.citations()
    for file in ["docs/protocol.md", "docs/design.md", "docs/aprs-is.md", "docs/push.md"] {
      #expect(!(citations[file] ?? []).isEmpty, "nothing cites \(file)")
    }
    for (file, names) in citations {
      let headings = Self.headings(try Self.text(file))
      for name in names.sorted() {
        // A heading's first words name it: "Opt-in answers" is "Opt-in answers (`want`)", "Idle" is "Idle: what
        // wakes each process", "Which settings act station-wide" is "…, and why that is safe".
        let found = headings.contains { heading in
          heading == name || [" (", ":", ","].contains { heading.hasPrefix(name + $0) }
        }
        #expect(found, "\(file) has no heading \"\(name)\"")
      }
    }
  }

  /// The documents this repository once read from beside it are its own now: no source names them.
  @Test func noSourcePointsOutsideTheRepository() throws {
    let outside = try NSRegularExpression(pattern: #"(?<![a-z/])(PROTOCOL|DESIGN|APRS-IS|PUSH)\.md"#)
    for (url, text) in try Self.swiftFiles() where url.lastPathComponent != "ContractDocumentTests.swift" {
      let range = NSRange(text.startIndex..., in: text)
      let name = url.lastPathComponent
      #expect(outside.firstMatch(in: text, range: range) == nil, "\(name) cites a document outside")
    }
  }
}
