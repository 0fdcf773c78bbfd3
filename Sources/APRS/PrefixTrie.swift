/// A set of station addresses as a prefix trie: their ``PackedCall`` keys, sorted, in chunks of at most
/// ``chunkCapacity``.
///
/// Because every prefix's addresses are one key range, the sorted keys are the trie: a prefix's subtree is
/// found with one binary search (``first(atLeast:)``), its children by jumping from range to range. No
/// node or station is a heap object of its own: 8 bytes per station plus chunk slack (about 11 bytes per
/// station on average, at most 16). Inserting or removing one station costs a binary search and a shift
/// inside one chunk (O(log n + ``chunkCapacity``)), never a rebuild. ``exactBytes`` (what an exact entry
/// list costs on a filter line) is kept up to date on every change.
struct PrefixTrie: Sendable {
  /// The most keys in one chunk; a chunk that grows past it is split in halves.
  static let chunkCapacity = 512

  /// The chunks, in key order; none is empty.
  private var chunks: [[UInt64]] = []
  /// The first key of each chunk, for the binary search over chunks.
  private var firsts: [UInt64] = []
  /// The number of stations.
  private(set) var count = 0
  /// The bytes of the exact entry list: each station's length plus one separator, and its `CALL-0` entry's
  /// for a bare call (``PackedCall/entryBytes(_:)``).
  private(set) var exactBytes = 0

  /// An empty set.
  init() {}

  /// The keys a chunk gets when the set is built in key order: room for inserts before it splits.
  static let loadFill = chunkCapacity * 3 / 4

  /// A set holding `keys` (any order, duplicates allowed). Keys already in order are not sorted again,
  /// and no copy of them is made besides the chunks.
  init(keys: some Sequence<UInt64>) {
    var sorted = Array(keys)
    if !Self.isSorted(sorted) { sorted.sort() }
    for key in sorted where key != chunks.last?.last { appendInOrder(key) }
  }

  private static func isSorted(_ keys: [UInt64]) -> Bool {
    var index = 1
    while index < keys.count {
      if keys[index - 1] > keys[index] { return false }
      index += 1
    }
    return true
  }

  /// Adds a key larger than every key in the set, filling chunks to ``loadFill``.
  private mutating func appendInOrder(_ key: UInt64) {
    if let last = chunks.indices.last, chunks[last].count < Self.loadFill {
      chunks[last].append(key)
    } else {
      var chunk: [UInt64] = []
      chunk.reserveCapacity(Self.chunkCapacity + 1)
      chunk.append(key)
      chunks.append(chunk)
      firsts.append(key)
    }
    added(key)
  }

  /// True when the set has no station.
  var isEmpty: Bool { count == 0 }

  /// Every key, in order.
  var keys: [UInt64] { chunks.flatMap { $0 } }

  /// Whether `key` is in the set.
  func contains(_ key: UInt64) -> Bool {
    guard !chunks.isEmpty else { return false }
    let chunk = chunks[chunkIndex(for: key)]
    let position = Self.lowerBound(key, in: chunk)
    return position < chunk.count && chunk[position] == key
  }

  /// The smallest key ≥ `key`, nil when there is none.
  func first(atLeast key: UInt64) -> UInt64? {
    guard !chunks.isEmpty else { return nil }
    let index = chunkIndex(for: key)
    let chunk = chunks[index]
    let position = Self.lowerBound(key, in: chunk)
    if position < chunk.count { return chunk[position] }
    return index + 1 < chunks.count ? firsts[index + 1] : nil
  }

  /// Adds `key`; false when it was already there.
  @discardableResult
  mutating func insert(_ key: UInt64) -> Bool {
    guard !chunks.isEmpty else {
      var chunk: [UInt64] = []
      chunk.reserveCapacity(Self.chunkCapacity + 1)
      chunk.append(key)
      chunks = [chunk]
      firsts = [key]
      added(key)
      return true
    }
    if let last = chunks.last?.last, key > last {
      // Past the end (a set built in key order): fill the last chunk, then start a new one.
      appendInOrder(key)
      return true
    }
    let index = chunkIndex(for: key)
    let position = Self.lowerBound(key, in: chunks[index])
    if position < chunks[index].count && chunks[index][position] == key { return false }
    chunks[index].insert(key, at: position)
    if position == 0 { firsts[index] = key }
    if chunks[index].count > Self.chunkCapacity { split(index) }
    added(key)
    return true
  }

  /// Removes `key`; false when it was not there.
  @discardableResult
  mutating func remove(_ key: UInt64) -> Bool {
    guard !chunks.isEmpty else { return false }
    let index = chunkIndex(for: key)
    let position = Self.lowerBound(key, in: chunks[index])
    guard position < chunks[index].count && chunks[index][position] == key else { return false }
    chunks[index].remove(at: position)
    count -= 1
    exactBytes -= PackedCall.entryBytes(key)
    if chunks[index].isEmpty {
      chunks.remove(at: index)
      firsts.remove(at: index)
    } else {
      if position == 0 { firsts[index] = chunks[index][0] }
      mergeIfSmall(index)
    }
    return true
  }

  private mutating func added(_ key: UInt64) {
    count += 1
    exactBytes += PackedCall.entryBytes(key)
  }

  /// Splits a full chunk into two fresh halves.
  private mutating func split(_ index: Int) {
    let full = chunks[index]
    let half = full.count / 2
    var low: [UInt64] = []
    low.reserveCapacity(Self.chunkCapacity + 1)
    low.append(contentsOf: full[..<half])
    var high: [UInt64] = []
    high.reserveCapacity(Self.chunkCapacity + 1)
    high.append(contentsOf: full[half...])
    chunks[index] = low
    chunks.insert(high, at: index + 1)
    firsts.insert(high[0], at: index + 1)
  }

  /// Folds a chunk that fell below an eighth of the capacity into its next (or previous) neighbour when
  /// both fit one chunk, so many removals do not leave many nearly empty chunks.
  private mutating func mergeIfSmall(_ index: Int) {
    guard chunks[index].count < Self.chunkCapacity / 8 else { return }
    for other in [index + 1, index - 1] where other >= 0 && other < chunks.count {
      guard chunks[other].count + chunks[index].count <= Self.chunkCapacity else { continue }
      let (low, high) = (min(index, other), max(index, other))
      chunks[low].append(contentsOf: chunks[high])
      chunks.remove(at: high)
      firsts.remove(at: high)
      return
    }
  }

  /// The chunk that holds `key` or would: the last one whose first key is ≤ `key` (the first chunk when
  /// `key` is below all of them).
  private func chunkIndex(for key: UInt64) -> Int {
    var low = 0
    var high = firsts.count
    while low < high {
      let middle = (low + high) / 2
      if firsts[middle] <= key { low = middle + 1 } else { high = middle }
    }
    return max(0, low - 1)
  }

  /// The position of the first element ≥ `key` in a sorted chunk.
  private static func lowerBound(_ key: UInt64, in chunk: [UInt64]) -> Int {
    var low = 0
    var high = chunk.count
    while low < high {
      let middle = (low + high) / 2
      if chunk[middle] < key { low = middle + 1 } else { high = middle }
    }
    return low
  }
}
