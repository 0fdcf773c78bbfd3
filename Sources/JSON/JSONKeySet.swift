/// The keys of one JSON object so far, compared by their unescaped UTF-8 bytes: the parser's duplicate check.
///
/// Bytes, not `String ==`: Swift compares strings by Unicode canonical equivalence, which would call
/// `"\u0300"` and `"\u0340"` the same key, while RFC 8259 §8.3 compares code units. `"a"` and `"\u0061"` unescape
/// to the same byte and are the same key.
///
/// Open addressing with linear probing in a power-of-two table kept at most half full: an insert inspects a
/// small constant number of slots on average, so n keys cost time linear in n and in their bytes. The hashes
/// come from the standard library's `Hasher` (SipHash-1-3), which is seeded randomly per process, so a client
/// cannot precompute keys that collide to flood one chain. (`SWIFT_DETERMINISTIC_HASHING` in the environment
/// turns the seed off; the services never set it.) The parser's member cap bounds the table even so.
///
/// The parser keeps one set per nesting level and reuses it for each object at that level; `removeAll()` costs
/// the keys it held, not the table's size, so many small objects after one wide object stay linear.
struct JSONKeySet {
  private struct Entry {
    /// The key's hash.
    var hash: Int
    /// Where its bytes start in `bytes`.
    var start: Int
    /// How many bytes it has.
    var count: Int
    /// Its slot in `slots`.
    var slot: Int
  }

  /// Every key's bytes, one after the other.
  private var bytes: [UInt8] = []
  private var entries: [Entry] = []
  /// 0 for an empty slot, else the index in `entries` plus one. Empty until the first insert.
  private var slots: [Int32] = []

  /// Slots touched so far by inserts, growing and emptying, over the set's whole life (not reset by
  /// `removeAll()`): the measure of work that tests check grows linearly with the number of keys.
  private(set) var probes = 0

  /// The number of keys in the set.
  var count: Int { entries.count }

  /// Adds `key` (its unescaped UTF-8 bytes); returns false, leaving the set as it was, when it is already in.
  mutating func insert(_ key: UnsafeBufferPointer<UInt8>) -> Bool {
    var hasher = Hasher()
    hasher.combine(bytes: UnsafeRawBufferPointer(key))
    let hash = hasher.finalize()
    if (entries.count + 1) * 2 > slots.count { grow() }
    let mask = slots.count - 1
    var slot = hash & mask
    while slots[slot] != 0 {
      probes += 1
      let entry = entries[Int(slots[slot]) - 1]
      if entry.hash == hash && entry.count == key.count
        && bytes[entry.start..<entry.start + entry.count].elementsEqual(key)
      {
        return false
      }
      slot = (slot + 1) & mask
    }
    probes += 1
    slots[slot] = Int32(entries.count + 1)
    entries.append(Entry(hash: hash, start: bytes.count, count: key.count, slot: slot))
    bytes.append(contentsOf: key)
    return true
  }

  /// Empties the set and keeps its storage; costs the number of keys, not the table's size.
  mutating func removeAll() {
    for entry in entries { slots[entry.slot] = 0 }
    probes += entries.count
    entries.removeAll(keepingCapacity: true)
    bytes.removeAll(keepingCapacity: true)
  }

  /// Doubles the table (16 slots at first) and places every key again.
  private mutating func grow() {
    slots = [Int32](repeating: 0, count: max(16, slots.count * 2))
    let mask = slots.count - 1
    for index in entries.indices {
      var slot = entries[index].hash & mask
      while slots[slot] != 0 {
        probes += 1
        slot = (slot + 1) & mask
      }
      probes += 1
      slots[slot] = Int32(index + 1)
      entries[index].slot = slot
    }
  }
}
