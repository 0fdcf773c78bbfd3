import Foundation
import PackagePlugin

/// Embeds the migrations in `sql/` (the schema's single source of truth) into the
/// target as Swift string literals, so the binaries carry their schema with them.
@main
struct EmbedSQLPlugin: BuildToolPlugin {
  func createBuildCommands(context: PluginContext, target: Target) async throws -> [Command] {
    let sqlDirectory = context.package.directoryURL.appending(path: "sql")
    let files = try FileManager.default.contentsOfDirectory(atPath: sqlDirectory.path())
      .filter { $0.hasSuffix(".sql") }
      .sorted()
      .map { sqlDirectory.appending(path: $0) }
    let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedMigrations.swift")
    return [
      .buildCommand(
        displayName: "Embedding \(files.count) migrations from sql/",
        executable: try context.tool(named: "embed-sql").url,
        arguments: [output.path()] + files.map { $0.path() },
        inputFiles: files,
        outputFiles: [output])
    ]
  }
}
