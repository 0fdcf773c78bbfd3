import Foundation

/// A fresh directory under /tmp for one test's files; `remove()` it in a `defer`.
public struct TempDirectory: Sendable {
  /// The directory.
  public let path: String

  public init() throws {
    path = try makeTemporaryDirectory("store")
  }

  /// The database file inside the directory (nothing is created there).
  public var database: String { path + "/store.sqlite" }

  /// Removes the directory and everything in it.
  public func remove() {
    try? FileManager.default.removeItem(atPath: path)
  }
}
