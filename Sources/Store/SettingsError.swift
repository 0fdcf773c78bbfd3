/// Why a station setting was refused (`POST /v1/settings` answers 400 with ``description``): the field, and
/// what is wrong with it. Nothing of a refused update is stored.
public struct SettingsError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The field as the request named it: `blocked`, `blocked[3]`, `quietHours.start`, `ackPolicy`, ….
  public var field: String
  /// What is wrong, a sentence fragment after the field (`must be between 0 and 1439`).
  public var reason: String

  /// A refusal of `field`; see the properties.
  public init(field: String, reason: String) {
    self.field = field
    self.reason = reason
  }

  /// `<field> <reason>`, e.g. `quietHours.start must be between 0 and 1439`.
  public var description: String { "\(field) \(reason)" }
}
