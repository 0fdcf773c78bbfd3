/// A binary min-heap of (deadline, id) pairs: the next deadline in O(1), insert and pop in
/// O(log n). Entries are never removed from the middle: the owner checks a popped entry against
/// what it still holds (an id it has forgotten, or a deadline it has moved, is skipped).
struct DeadlineHeap {
  private var items: [(deadline: Int64, id: UInt64)] = []

  var isEmpty: Bool { items.isEmpty }
  var count: Int { items.count }

  /// The earliest deadline, if any.
  var first: (deadline: Int64, id: UInt64)? { items.first }

  mutating func insert(deadline: Int64, id: UInt64) {
    items.append((deadline, id))
    var child = items.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard items[child].deadline < items[parent].deadline else { break }
      items.swapAt(child, parent)
      child = parent
    }
  }

  /// Removes and returns the earliest entry.
  mutating func pop() -> (deadline: Int64, id: UInt64)? {
    guard !items.isEmpty else { return nil }
    let top = items[0]
    let last = items.removeLast()
    if !items.isEmpty {
      items[0] = last
      var parent = 0
      while true {
        let left = 2 * parent + 1
        let right = left + 1
        var smallest = parent
        if left < items.count && items[left].deadline < items[smallest].deadline { smallest = left }
        if right < items.count && items[right].deadline < items[smallest].deadline { smallest = right }
        if smallest == parent { break }
        items.swapAt(parent, smallest)
        parent = smallest
      }
    }
    if items.isEmpty && items.capacity > 1024 { items = [] }
    return top
  }

  mutating func removeAll() { items = [] }
}
