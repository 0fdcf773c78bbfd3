extension FilterPlanner {
  /// The `#filter` line for the current stations: at most `maximumLineLength` bytes with CR LF, every
  /// station matched by an entry.
  ///
  /// Every exact entry for a bare call (no SSID, at most 7 characters) comes with one for the same call with
  /// `-0` (`g/N0CALL/N0CALL-0`): APRS names the station either way, and aprsc's `g/` and `b/` match exactly.
  /// Those entries' bytes count wherever exact entries are weighed; beyond the exact list, such a call alone
  /// under a prefix is first covered by `CALL*` (which takes `CALL-0` in), and gets its two exact entries only
  /// when narrowing that prefix is worth the bytes.
  ///
  /// While the exact station list fits, that is the line. Beyond, the planner starts from the widest line
  /// (one `X*` per first character in use; a bare `*` matches nothing on aprsc) and narrows it greedily:
  /// narrowing `P*` replaces it by an exact entry for the station `P` itself if there is one, and one
  /// entry per next character in use (`PA*`, `P1*`, … or the exact station when a child holds just one
  /// station of that length). Each step costs bytes and saves the ``AddresseeModel`` share of the next
  /// characters nobody registered; the step that saves the most share per byte goes first, while the
  /// line fits (`b/` shares count ``senderWeight`` times). Steps that cost nothing (the last one down to
  /// a lone station) always go.
  ///
  /// The work is bounded by what fits on the line (a few hundred narrowing steps, each a few binary
  /// searches), not by the number of stations.
  /// `extraAddressees`: `g/` entries to add as they are (the SSIDs stations collect besides their own, e.g.
  /// `N0CALL*` or `N0CALL-9`, and what subscriptions need: `BLN*`, group calls, `NWS*`), sorted in with the
  /// rest; `extraSenders`: `b/` entries likewise (watched calls). Their bytes come off the budget first. Together
  /// they must take at most ``maximumExtraBytes(maximumLineLength:)`` (Σ entry + 1), else they are left out.
  /// `ownTransmissions`: the stations that follow their own transmissions (`ackPolicy:"fallback"`), each given an
  /// exact `b/` entry from what the extra entries leave of ``maximumExtraBytes(maximumLineLength:)``, the oldest
  /// request first (``ownTransmissionEntries(_:extraSenders:room:)``), before the narrowing; whom the line follows
  /// and who fell back is ``FilterLine/ownTransmissions``. Without requests the line is the one it always was.
  /// - Precondition: `maximumLineLength` ≥ ``minimumLineLength``.
  public func plan(
    maximumLineLength: Int = FilterPlanner.maximumLineLength, extraAddressees: [String] = [],
    extraSenders: [String] = [], ownTransmissions: [OwnTransmissionRequest] = []
  ) -> FilterLine {
    precondition(maximumLineLength >= Self.minimumLineLength, "a line budget below the widest plan")
    var extra = [extraAddressees, extraSenders]
    var extraBytes = extra.joined().reduce(0) { $0 + $1.utf8.count + 1 }
    let extraRoom = Self.maximumExtraBytes(maximumLineLength: maximumLineLength)
    if extraBytes > extraRoom {
      extra = [[], []]
      extraBytes = 0
    }
    var followed = OwnTransmissionPlan.none
    if !ownTransmissions.isEmpty {
      let own = ownTransmissionEntries(
        ownTransmissions, extraSenders: extra[Part.senders.rawValue], room: extraRoom - extraBytes)
      extra[Part.senders.rawValue] += own.entries
      extraBytes += FilterEntryFit.bytes(own.entries)
      followed = own.plan
    }
    let parts = Part.allCases.filter { !tries[$0.rawValue].isEmpty || !extra[$0.rawValue].isEmpty }
    guard !parts.isEmpty else {
      var line = FilterLine.empty
      line.ownTransmissions = followed
      return line
    }
    // `#filter ` + the parts joined by spaces + CR LF; a part is its type (`g/`) and the entries joined
    // by `/`, i.e. 1 + Σ (entry + 1) bytes. The budget is for the Σ (entry + 1).
    let budget = maximumLineLength - Self.lineOverhead - (parts.count - 1) - parts.count - extraBytes
    var search = PrefixSearch(planner: self, parts: parts, extra: extra)
    let exactBytes = parts.reduce(0) { $0 + tries[$1.rawValue].exactBytes }
    if exactBytes <= budget {
      search.takeAllExact()
    } else {
      search.narrow(budget: budget)
    }
    var line = search.line()
    line.ownTransmissions = followed
    return line
  }

  /// The most bytes (Σ entry + 1) ``plan(maximumLineLength:extraAddressees:extraSenders:)`` gives extra entries: what
  /// the line holds beyond the widest plan of both parts (36 one-character prefixes each, 3 bytes apiece).
  public static func maximumExtraBytes(maximumLineLength: Int) -> Int {
    max(0, maximumLineLength - lineOverhead - 3 - 2 * 36 * 3)
  }
}

/// One run of the planner's greedy narrowing (see ``FilterPlanner/plan(maximumLineLength:)``).
private struct PrefixSearch {
  /// A prefix entry `P*` of a part: the first `depth` characters of `key`, and the model share it lets
  /// through.
  struct Prefix {
    let part: Int
    let key: UInt64
    let depth: Int
    let share: Double
  }

  /// What narrowing a prefix would do.
  struct Narrowing {
    let prefix: Prefix
    /// Exact entries it adds: the station equal to the prefix, and lone stations one character longer.
    let exact: [UInt64]
    /// Prefix entries it adds, one character longer.
    let prefixes: [Prefix]
    /// Line bytes it adds (≤ 0 when it costs nothing).
    let bytes: Int
    /// Weighted share it saves (≥ 0).
    let saving: Double

    /// Share saved per byte; infinite for steps that cost nothing.
    var rate: Double { bytes > 0 ? saving / Double(bytes) : .infinity }

    /// The order of the queue: best rate first, ties by part, key and depth so the result never depends
    /// on anything but the sets.
    func goesBefore(_ other: Narrowing) -> Bool {
      if rate != other.rate { return rate > other.rate }
      if prefix.part != other.prefix.part { return prefix.part < other.prefix.part }
      if prefix.key != other.prefix.key { return prefix.key < other.prefix.key }
      return prefix.depth < other.prefix.depth
    }
  }

  let planner: FilterPlanner
  let parts: [FilterPlanner.Part]
  /// `g/` entries added as they are.
  /// Extra entries per part (by raw value), added as they are.
  let extra: [[String]]
  /// Per part (by raw value): exact entries and prefix entries chosen.
  var exact: [[UInt64]] = [[], []]
  var prefixes: [[Prefix]] = [[], []]

  init(planner: FilterPlanner, parts: [FilterPlanner.Part], extra: [[String]] = [[], []]) {
    self.planner = planner
    self.parts = parts
    self.extra = extra
  }

  /// Every station gets its exact entry.
  mutating func takeAllExact() {
    for part in parts { exact[part.rawValue] = planner.tries[part.rawValue].keys }
  }

  /// The greedy narrowing from the widest line, within `budget` bytes of entries (Σ entry + 1).
  mutating func narrow(budget: Int) {
    var used = 0
    var queue = NarrowingQueue()
    for part in parts {
      // The root: its children are the widest line. It has no entry of its own and must be narrowed.
      let root = narrowing(of: Prefix(part: part.rawValue, key: 0, depth: 0, share: 1))
      used += root.bytes
      apply(root, to: &queue)
    }
    while let step = queue.pop() {
      if used + step.bytes <= budget {
        used += step.bytes
        apply(step, to: &queue)
      } else {
        prefixes[step.prefix.part].append(step.prefix)
      }
    }
  }

  /// Takes a narrowing's entries and queues its prefixes for narrowing in turn.
  private mutating func apply(_ step: Narrowing, to queue: inout NarrowingQueue) {
    exact[step.prefix.part].append(contentsOf: step.exact)
    for prefix in step.prefixes { queue.push(narrowing(of: prefix)) }
  }

  /// What narrowing `prefix` means for the stations under it.
  private func narrowing(of prefix: Prefix) -> Narrowing {
    let trie = planner.tries[prefix.part]
    let depth = prefix.depth
    let childDepth = depth + 1
    let end = prefix.key &+ PackedCall.span(depth: depth)
    var exact: [UInt64] = []
    var children: [Prefix] = []
    var bytes = depth == 0 ? 0 : -(depth + 2)  // the entry `P*` goes away
    var saving = prefix.share
    var next = trie.first(atLeast: prefix.key)
    while let key = next, key < end {
      let length = PackedCall.length(key)
      if length == depth {  // the station `P` itself
        exact.append(key)
        bytes += PackedCall.entryBytes(key)
        next = trie.first(atLeast: key + 1)
        continue
      }
      let childKey = PackedCall.prefix(key, depth: childDepth)
      let childEnd = childKey &+ PackedCall.span(depth: childDepth)
      let after = trie.first(atLeast: key + 1)
      let lone = after.map { $0 >= childEnd } ?? true
      // A lone bare call with a `-0` entry to pay for stays a prefix (`N0CALL*`, which covers `N0CALL-0`)
      // until narrowing that prefix is worth its bytes.
      if lone && length == childDepth && PackedCall.zeroSSIDAlias(key) == nil {
        exact.append(key)
        bytes += PackedCall.entryBytes(key)
      } else {
        // A child deeper than 8 characters holds one station of exactly 9: handled above.
        assert(childDepth <= PackedCall.maximumPrefixLength)
        let share = planner.model.share(key: childKey, depth: childDepth)
        children.append(Prefix(part: prefix.part, key: childKey, depth: childDepth, share: share))
        bytes += childDepth + 2
        saving -= share
      }
      next = lone ? after : trie.first(atLeast: childEnd)
    }
    let weight = prefix.part == FilterPlanner.Part.senders.rawValue ? planner.senderWeight : 1
    return Narrowing(
      prefix: prefix, exact: exact, prefixes: children, bytes: bytes, saving: max(0, saving) * weight)
  }

  /// The chosen entries as a line.
  func line() -> FilterLine {
    var specs: [String] = []
    var result: [FilterLine.Part] = [.empty, .empty]
    for part in parts {
      let index = part.rawValue
      var entries = exact[index].map(PackedCall.string)
      // `CALL-0` beside each exact bare `CALL`: the same station, and aprsc's match is exact.
      entries += exact[index].compactMap(PackedCall.zeroSSIDAlias).map(PackedCall.string)
      entries += prefixes[index].map { PackedCall.string($0.key) + "*" }
      let known = Set(entries)
      entries += Set(extra[index]).filter { !known.contains($0) }
      entries.sort()
      specs.append(part.filterType + entries.joined(separator: "/"))
      result[index] = FilterLine.Part(
        entries: entries, exactStations: exact[index].count,
        prefixStations: planner.tries[index].count - exact[index].count,
        estimatedShare: prefixes[index].reduce(0) { $0 + $1.share })
    }
    return FilterLine(spec: specs.joined(separator: " "), addressees: result[0], senders: result[1])
  }
}

/// A binary heap of narrowings, best first (``PrefixSearch/Narrowing/goesBefore(_:)``).
private struct NarrowingQueue {
  private var heap: [PrefixSearch.Narrowing] = []

  mutating func push(_ element: PrefixSearch.Narrowing) {
    heap.append(element)
    var child = heap.count - 1
    while child > 0 {
      let parent = (child - 1) / 2
      guard heap[child].goesBefore(heap[parent]) else { break }
      heap.swapAt(child, parent)
      child = parent
    }
  }

  mutating func pop() -> PrefixSearch.Narrowing? {
    guard !heap.isEmpty else { return nil }
    heap.swapAt(0, heap.count - 1)
    let top = heap.removeLast()
    var parent = 0
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var best = parent
      if left < heap.count && heap[left].goesBefore(heap[best]) { best = left }
      if right < heap.count && heap[right].goesBefore(heap[best]) { best = right }
      if best == parent { break }
      heap.swapAt(parent, best)
      parent = best
    }
    return top
  }
}
