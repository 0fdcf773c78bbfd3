/// Fits `g/` or `b/` entries into a byte budget by widening them (pure): what the filter trades for room.
///
/// While the entries take more than `budget` bytes (Σ entry + 1, the `/` each needs), the longest entry (by its
/// literal characters) is replaced by the prefix one character shorter with `*` (`SLCARES` → `SLCARE*`,
/// `BLN3WX` → `BLN3W*`), and entries a prefix covers are dropped. Each step costs at most as many bytes as it
/// frees, so the loop ends: at worst every entry is a one-character prefix. The widening lets more through than
/// was asked for; the listener counts what arrives for nobody (``LineSummary``'s skip counts).
public enum FilterEntryFit {
  /// The entries (sorted, without repeats or covered ones) within `budget` bytes; empty when not even the
  /// one-character prefixes fit.
  public static func fit(_ entries: some Sequence<String>, budget: Int) -> [String] {
    var current = normalized(Set(entries))
    while bytes(current) > budget {
      guard
        let longest = current.max(by: {
          literal($0).count < literal($1).count || (literal($0).count == literal($1).count && $0 > $1)
        }),
        literal(longest).count > 1
      else { return [] }
      current.remove(longest)
      current.insert(String(literal(longest).dropLast()) + "*")
      current = normalized(current)
    }
    return current.sorted()
  }

  /// The entries of `ranked` (most wanted first) that fit `budget` bytes as they are, in that order, never
  /// widened: for `b/` entries, where a prefix would let every packet of every matching sender through (positions,
  /// weather, telemetry: toward the whole feed), not only messages. Sorted; `leftOut` keeps the rank order.
  public static func fitExact(_ ranked: [String], budget: Int) -> (kept: [String], leftOut: [String]) {
    var kept: [String] = []
    var leftOut: [String] = []
    var used = 0
    for entry in ranked {
      let cost = entry.utf8.count + 1
      if used + cost <= budget {
        kept.append(entry)
        used += cost
      } else {
        leftOut.append(entry)
      }
    }
    return (kept.sorted(), leftOut)
  }

  /// The bytes entries take on the line (each and its `/`).
  public static func bytes(_ entries: some Collection<String>) -> Int {
    entries.reduce(0) { $0 + $1.utf8.count + 1 }
  }

  /// The characters before a trailing `*`.
  private static func literal(_ entry: String) -> Substring {
    entry.hasSuffix("*") ? entry.dropLast() : entry[...]
  }

  /// Without the entries a prefix entry already covers.
  private static func normalized(_ entries: Set<String>) -> Set<String> {
    let prefixes = entries.filter { $0.hasSuffix("*") }.map { $0.dropLast() }
    return entries.filter { entry in
      !prefixes.contains { prefix in entry != prefix + "*" && entry.hasPrefix(prefix) }
    }
  }
}
