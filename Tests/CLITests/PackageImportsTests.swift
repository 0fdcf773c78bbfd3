import Foundation
import Testing

/// Package.swift declares every import: a target that imports one of the package's own modules names it among its
/// dependencies, so the graph Package.swift draws is the one the code has (a module that comes in only through
/// another's dependencies builds today and breaks when that other drops it).
@Suite struct PackageImportsTests {
  /// One target of Package.swift: its name, folder and the dependencies it names.
  struct Target: Equatable {
    var name: String
    var path: String
    var dependencies: Set<String>
  }

  /// The targets of a Package.swift text: each `.target(`, `.executableTarget(`, `.testTarget(`,
  /// `.systemLibrary(` or `.plugin(` with its `name:`, optional `path:` and the quoted names in `dependencies: [ … ]`.
  static func targets(of manifest: String) -> [Target] {
    let kinds = [".target(", ".executableTarget(", ".testTarget(", ".systemLibrary(", ".plugin("]
    var targets: [Target] = []
    var rest = Substring(manifest)
    while let start = kinds.compactMap({ rest.range(of: $0) }).min(by: { $0.lowerBound < $1.lowerBound }) {
      let kind = String(rest[start])
      rest = rest[start.upperBound...]
      let next = kinds.compactMap { rest.range(of: $0)?.lowerBound }.min() ?? rest.endIndex
      let block = rest[..<next]
      guard let name = quoted(after: "name:", in: block) else { continue }
      let folder = kind == ".testTarget(" ? "Tests" : "Sources"
      var dependencies: Set<String> = []
      if let list = block.range(of: "dependencies: [") {
        let tail = block[list.upperBound...]
        let inside = tail[..<(tail.firstIndex(of: "]") ?? tail.endIndex)]
        dependencies = Set(
          inside.split(separator: "\"", omittingEmptySubsequences: false).enumerated().filter {
            $0.offset % 2 == 1
          }.map { String($0.element) })
      }
      targets.append(
        Target(
          name: name, path: quoted(after: "path:", in: block) ?? "\(folder)/\(name)",
          dependencies: dependencies))
    }
    return targets
  }

  static func quoted(after label: String, in text: Substring) -> String? {
    guard let at = text.range(of: label) else { return nil }
    let tail = text[at.upperBound...].drop { $0 == " " }
    guard tail.first == "\"" else { return nil }
    return String(tail.dropFirst().prefix { $0 != "\"" })
  }

  /// The modules `source` imports (`import X`, `@testable import X`, `public import X`).
  static func imports(of source: String) -> Set<String> {
    var found: Set<String> = []
    for line in source.split(separator: "\n") {
      let words = line.split(separator: " ")
      guard let index = words.firstIndex(of: "import"), index < words.count - 1,
        words[..<index].allSatisfy({ $0.hasPrefix("@") || $0 == "public" || $0 == "internal" })
      else { continue }
      found.insert(String(words[index + 1]))
    }
    return found
  }

  /// Each target's imports of the package's own modules that its dependencies leave out.
  static func undeclared(root: String, targets: [Target]) throws -> [String] {
    let modules = Dictionary(
      targets.map { ($0.name.replacingOccurrences(of: "-", with: "_"), $0.name) }, uniquingKeysWith: { $1 })
    var problems: [String] = []
    for target in targets {
      let folder = root + "/" + target.path
      guard let files = FileManager.default.enumerator(atPath: folder) else { continue }
      var imported: Set<String> = []
      for case let file as String in files where file.hasSuffix(".swift") {
        imported.formUnion(imports(of: try String(contentsOfFile: folder + "/" + file, encoding: .utf8)))
      }
      for module in imported.sorted() {
        guard let name = modules[module], name != target.name, !target.dependencies.contains(name) else {
          continue
        }
        problems.append(
          "\(target.name) imports \(module) but Package.swift does not name \(name) among its dependencies")
      }
    }
    return problems
  }

  static let root: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
  }()

  @Test func everyImportOfAModuleOfThePackageIsADeclaredDependency() throws {
    let targets = Self.targets(of: try String(contentsOfFile: Self.root + "/Package.swift", encoding: .utf8))
    #expect(targets.count > 20)
    #expect(targets.contains(Target(name: "TestSupport", path: "Tests/TestSupport", dependencies: [])))
    let problems = try Self.undeclared(root: Self.root, targets: targets)
    #expect(problems.isEmpty, "\(problems.joined(separator: "; "))")
  }

  @Test func anUndeclaredImportIsNamed() throws {
    let manifest = """
      .target(name: "Config", dependencies: ["Logging"]),
      .target(
        name: "API", dependencies: ["Store"]),
      .testTarget(name: "APITests", dependencies: ["API"]),
      """
    let targets = Self.targets(of: manifest)
    #expect(targets.map(\.name) == ["Config", "API", "APITests"])
    #expect(targets[1].dependencies == ["Store"] && targets[2].path == "Tests/APITests")
    // This repository's API imports Config and its tests import Store: both are named against the made-up manifest.
    let problems = try Self.undeclared(root: Self.root, targets: targets)
    #expect(
      problems.contains("API imports Config but Package.swift does not name Config among its dependencies"))
    #expect(
      Self.imports(of: "@testable import Store\npublic import Config\n// import Nothing\n") == [
        "Store", "Config",
      ])
  }
}
