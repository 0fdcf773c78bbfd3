import Config
import Foundation
import Testing

/// The keys `docs/configuration.md` documents: one table row per key under a `## \`[section]\`` heading
/// (`| \`key\` | default | range and unit | read by | meaning |`), and the `## Retired keys` table
/// (`| \`[section]\` \`key\` | what replaced it |`).
struct ConfigReference: Equatable {
  /// Documented keys by section.
  var keys: [String: Set<String>] = [:]
  /// Documented retired keys by section.
  var retired: [String: Set<String>] = [:]
  /// Rows that do not follow the shape: a key outside a section, an empty cell, a key written twice.
  var problems: [String] = []

  init(markdown: String) {
    var section: String?
    var inRetired = false
    for (index, line) in markdown.components(separatedBy: "\n").enumerated() {
      let place = "docs/configuration.md line \(index + 1)"
      if line.hasPrefix("#") {
        let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
        inRetired = title == "Retired keys"
        section = nil
        if title.hasPrefix("`["), title.hasSuffix("]`") {
          section = String(title.dropFirst(2).dropLast(2))
        }
        continue
      }
      guard line.hasPrefix("| `") else { continue }
      let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
        .map { $0.trimmingCharacters(in: .whitespaces) }
      if inRetired {
        // `[section]` `key`
        let parts = cells[0].split(separator: " ").map {
          $0.trimmingCharacters(in: CharacterSet(charactersIn: "`"))
        }
        guard parts.count == 2, parts[0].hasPrefix("["), parts[0].hasSuffix("]"), cells.count == 2,
          !cells[1].isEmpty
        else {
          problems.append("\(place): a retired key is `| `[section]` `key` | what replaced it |`")
          continue
        }
        retired[String(parts[0].dropFirst().dropLast()), default: []].insert(parts[1])
        continue
      }
      guard let section else {
        problems.append("\(place): a key row outside a `## `[section]`` heading")
        continue
      }
      let key = cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
      guard cells.count == 5, cells.allSatisfy({ !$0.isEmpty }), !key.contains(" ") else {
        problems.append(
          "\(place): [\(section)] \(key): expected | key | default | range and unit | read by | meaning |")
        continue
      }
      if keys[section, default: []].insert(key).inserted == false {
        problems.append("\(place): [\(section)] \(key) is documented twice")
      }
    }
  }

  /// What differs from `schema`: keys in the code and not here, keys here and not in the code, the same for
  /// retired keys; empty when the two agree.
  func differences(from schema: ConfigSchema) -> [String] {
    var found: [String] = []
    let code = schema.sections
    for (section, names) in code.sorted(by: { $0.key < $1.key }) {
      for key in names.subtracting(keys[section] ?? []).sorted() {
        found.append("[\(section)] \(key) is read by the code but not documented")
      }
    }
    for (section, names) in keys.sorted(by: { $0.key < $1.key }) {
      for key in names.subtracting(code[section] ?? []).sorted() {
        found.append("[\(section)] \(key) is documented but no program reads it")
      }
    }
    let retiredInCode = schema.retiredKeys.mapValues { Set($0.keys) }
    for (section, names) in retiredInCode.sorted(by: { $0.key < $1.key }) {
      for key in names.subtracting(retired[section] ?? []).sorted() {
        found.append("retired [\(section)] \(key) is not documented")
      }
    }
    for (section, names) in retired.sorted(by: { $0.key < $1.key }) {
      for key in names.subtracting(retiredInCode[section] ?? []).sorted() {
        found.append("retired [\(section)] \(key) is documented but the code does not know it")
      }
    }
    for section in schema.uncheckedSections where keys[section] == nil {
      found.append("[\(section)] (any key) is not documented")
    }
    return found
  }
}

@Suite struct ConfigDocsTests {
  static let path: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path + "/docs/configuration.md"
  }()

  @Test func everyKeyOfTheCodeIsDocumentedAndEveryDocumentedKeyExists() throws {
    let reference = ConfigReference(markdown: try String(contentsOfFile: Self.path, encoding: .utf8))
    #expect(reference.problems == [])
    #expect(reference.differences(from: ConfigSchema.all) == [])
    // Every section of the code has its own heading.
    #expect(Set(reference.keys.keys) == Set(ConfigSchema.all.sections.keys))
  }

  static let sample = """
    # Configuration

    ## `[server]`

    | key | default | range and unit | read by | meaning |
    |---|---|---|---|---|
    | `database` | `./var/aprs-cloud.sqlite` | a file path | both | the database |
    | `colour` | blue | a colour | nobody | not a key |

    ## Retired keys

    | key | what replaced it |
    |---|---|
    | `[aprsis]` `oldKey` | nothing |
    """

  @Test func aKeyMissingEitherWayIsNamed() {
    let reference = ConfigReference(markdown: Self.sample)
    #expect(reference.problems == [])
    #expect(reference.keys == ["server": ["database", "colour"]])
    #expect(reference.retired == ["aprsis": ["oldKey"]])
    let schema = ConfigSchema(
      sections: ["server": ["database", "workers"]], retiredKeys: ["aprsis": ["gone": "remove it"]])
    #expect(
      reference.differences(from: schema) == [
        "[server] workers is read by the code but not documented",
        "[server] colour is documented but no program reads it",
        "retired [aprsis] gone is not documented",
        "retired [aprsis] oldKey is documented but the code does not know it",
      ])
  }

  @Test func aRowWithoutItsCellsOrOutsideASectionIsAProblem() {
    let reference = ConfigReference(
      markdown: """
        | `stray` | 1 | 1–2 | both | before any section |

        ## `[server]`

        | `workers` | 4 | | the responder | the range is missing |
        | `listen` | none | a path | the responder | ok |
        | `listen` | none | a path | the responder | twice |
        """)
    #expect(reference.keys == ["server": ["listen"]])
    #expect(reference.problems.count == 3, "\(reference.problems)")
  }
}
