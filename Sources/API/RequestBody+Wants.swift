import JSON
import Store

extension RequestBody {
  /// The most names one `want` may hold (a client names each option once; the few this protocol defines fit).
  static let maximumWantNames = 16
  /// The longest name in `want`, bytes.
  static let maximumWantNameLength = 32

  /// `want` (docs/protocol.md "Opt-in answers (`want`)"): an array of option names, parsed once into ``Wants``.
  /// Absent or `null` is none (every answer exactly as the shipping app gets it). Names this build does not know
  /// are ignored, so a client may ask for what a newer server offers; anything but an array of at most
  /// ``maximumWantNames`` strings of at most ``maximumWantNameLength`` bytes is a 400 naming `want`.
  func wants() throws(APIError) -> Wants {
    guard let value = self["want"] else { return [] }
    guard case .array(let elements) = value else {
      throw .badRequest("want must be an array of strings, not \(value.typeName)")
    }
    guard elements.count <= Self.maximumWantNames else {
      throw .badRequest("want holds \(elements.count) names; at most \(Self.maximumWantNames)")
    }
    var wants: Wants = []
    for (index, element) in elements.enumerated() {
      guard case .string(let name) = element else {
        throw .badRequest("want[\(index)] must be a string, not \(element.typeName)")
      }
      guard name.utf8.count <= Self.maximumWantNameLength else {
        throw .badRequest("want[\(index)] is longer than \(Self.maximumWantNameLength) bytes")
      }
      if let known = Wants(name: name) { wants.insert(known) }
    }
    return wants
  }
}
