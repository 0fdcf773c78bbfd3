#if canImport(Glibc)
  import Glibc
#endif

/// A test's own failure with a message (for `throw` where `#require` does not fit).
public struct TestFailure: Error, CustomStringConvertible {
  public let description: String
  public init(_ description: String) { self.description = description }
}

/// A fresh temporary folder `/tmp/ac-LABEL-XXXXXX` (short, so unix socket paths inside it stay
/// under 108 bytes).
public func makeTemporaryDirectory(_ label: String) throws -> String {
  var template = Array("/tmp/ac-\(label)-XXXXXX".utf8CString)
  guard let result = mkdtemp(&template) else { throw TestFailure("mkdtemp failed: \(errno)") }
  return String(cString: result)
}
