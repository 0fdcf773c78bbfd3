// Writes a Swift file holding every migration given on the command line, in order.
// Usage: embed-sql OUTPUT.swift sql/001_x.sql sql/002_y.sql ...
import Foundation

let arguments = CommandLine.arguments.dropFirst()
guard let outputPath = arguments.first else {
  FileHandle.standardError.write(Data("usage: embed-sql OUTPUT.swift FILE.sql...\n".utf8))
  exit(2)
}
var source = "// Generated from sql/ by embed-sql. Do not edit.\n"
source += "let embeddedMigrations: [(name: String, sql: String)] = [\n"
for path in arguments.dropFirst() {
  let name = URL(fileURLWithPath: path).lastPathComponent
  let sql = try String(contentsOfFile: path, encoding: .utf8)
  var hashes = "#"
  while sql.contains("\"" + hashes) { hashes += "#" }
  source += "  (name: \"\(name)\", sql: \(hashes)\"\"\"\n\(sql)\n\"\"\"\(hashes)),\n"
}
source += "]\n"
let existing = try? String(contentsOfFile: outputPath, encoding: .utf8)
if existing != source {
  try source.write(toFile: outputPath, atomically: true, encoding: .utf8)
}
