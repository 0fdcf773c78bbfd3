/// The Unicode bidirectional formatting characters: invisible, they make text display in another order than it
/// holds (U+202E turns `txt.exe` into what reads as `exe.txt`, the "Trojan Source" trick). Text from the air is
/// stored as received; where it is shown to a person (a forwarded mail or ntfy notification, the operator's
/// tool) each of them is written as a visible `<U+202E>` instead. Pure.
public enum BidiControls {
  /// Whether `scalar` is one of them (Unicode UAX #9, "Explicit Directional Embeddings", "Overrides", "Isolates"
  /// and "Implicit Directional Marks"): U+202A–U+202E (LRE, RLE, PDF, LRO, RLO), U+2066–U+2069 (LRI, RLI, FSI,
  /// PDI), U+200E and U+200F (LRM, RLM) and U+061C (ALM).
  public static func contains(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: true
    default: false
    }
  }

  /// `text` with each bidirectional control written as `<U+XXXX>` (4 upper-case hex digits), everything else as
  /// it is; `text` itself when it holds none.
  public static func escaped(_ text: String) -> String {
    guard text.unicodeScalars.contains(where: contains) else { return text }
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      guard contains(scalar) else {
        result.append(scalar)
        continue
      }
      let digits = String(scalar.value, radix: 16, uppercase: true)
      let escape = "<U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits + ">"
      result.append(contentsOf: escape.unicodeScalars)
    }
    return String(result)
  }
}
