/// What setting a provider up can fail with: each case is a sentence an operator can act on.
public struct PushError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The sentence.
  public let description: String

  public init(_ description: String) { self.description = description }
}
