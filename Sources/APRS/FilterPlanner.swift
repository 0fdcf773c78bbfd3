/// The stations the listener's APRS-IS filter must let through, and the planner of its one `#filter` line
/// (docs/design.md "The filter at any scale").
///
/// Two sets: **addressees** (`g/`: messages to registered stations) and **senders** (`b/`: outgoing
/// tracking, every packet a station sends). Stations that follow their own transmissions (`ackPolicy:"fallback"`)
/// come as requests to ``plan(maximumLineLength:extraAddressees:extraSenders:ownTransmissions:)``: exact `b/`
/// entries, never prefixes. Each is a ``PrefixTrie`` (8 bytes and no heap object per
/// station), updated one station at a time with a binary search and a shift inside one chunk, never
/// rebuilt; planning reads only the top of the tries (what a 510-byte line can name), so its cost does
/// not grow with the number of stations.
///
/// ``plan(maximumLineLength:)`` gives the exact station list while it fits, else a set of prefixes and
/// exact entries: every station covered, the line at most 510 bytes with CR LF, as little other traffic
/// as the ``AddresseeModel`` predicts. The same sets always give the same line, whatever
/// order the stations came in.
public struct FilterPlanner: Sendable {
  /// The two sets a filter line covers.
  public enum Part: Int, CaseIterable, Sendable {
    /// `g/`: messages whose addressee is a registered station.
    case addressees
    /// `b/`: every packet a tracked station sends.
    case senders

    /// The part's filter type: `g/` or `b/`.
    public var filterType: String { self == .addressees ? "g/" : "b/" }
  }

  /// The longest `#filter` line APRS-IS takes, CR LF included; a longer one is dropped silently.
  public static let maximumLineLength = 510
  /// The longest `#filter` line whose answer, `# filter SPEC active` (8 bytes longer), still fits one APRS-IS
  /// line (512 bytes with CR LF), so that a reader that skips longer lines can check it: the budget the listener
  /// plans with.
  public static let answerableLineLength = 504
  /// The shortest line budget ``plan(maximumLineLength:)`` accepts: room for the widest plan of both
  /// parts (36 one-character prefixes each).
  public static let minimumLineLength = 240
  /// The bytes `#filter ` and CR LF add to a spec.
  static let lineOverhead = 10

  /// How much more a `b/` prefix lets through than a `g/` prefix of the same share: a station sends
  /// positions, weather, telemetry and status as well as messages; the default 20 assumes about 20 such
  /// packets for each message (messages are a few per cent of APRS-IS traffic).
  public var senderWeight: Double
  /// The traffic model that weighs prefixes.
  public var model: AddresseeModel

  var tries: [PrefixTrie] = [PrefixTrie(), PrefixTrie()]

  /// An empty planner.
  public init(model: AddresseeModel = .callsigns, senderWeight: Double = 20) {
    self.model = model
    self.senderWeight = senderWeight
  }

  /// A planner holding `addressees` and `senders` (any order, duplicates ignored).
  public init(
    addressees: some Sequence<StationAddress>, senders: some Sequence<StationAddress> = [StationAddress](),
    model: AddresseeModel = .callsigns, senderWeight: Double = 20
  ) {
    self.init(model: model, senderWeight: senderWeight)
    tries[Part.addressees.rawValue] = PrefixTrie(keys: addressees.lazy.map(PackedCall.pack))
    tries[Part.senders.rawValue] = PrefixTrie(keys: senders.lazy.map(PackedCall.pack))
  }

  /// Adds a station to a part; false when it was already there.
  @discardableResult
  public mutating func insert(_ station: StationAddress, into part: Part = .addressees) -> Bool {
    tries[part.rawValue].insert(PackedCall.pack(station))
  }

  /// Removes a station from a part; false when it was not there.
  @discardableResult
  public mutating func remove(_ station: StationAddress, from part: Part = .addressees) -> Bool {
    tries[part.rawValue].remove(PackedCall.pack(station))
  }

  /// Whether a part holds `station`.
  public func contains(_ station: StationAddress, in part: Part = .addressees) -> Bool {
    tries[part.rawValue].contains(PackedCall.pack(station))
  }

  /// Adds a station given by its address as the store keeps it (upper case `CALL` or `CALL-SSID`): nil when
  /// the text is not an address (1–9 of `-`, `0`–`9`, `A`–`Z`), else false when it was already there.
  @discardableResult
  public mutating func insert(address: some StringProtocol, into part: Part = .addressees) -> Bool? {
    guard let key = PackedCall.pack(address.utf8) else { return nil }
    return tries[part.rawValue].insert(key)
  }

  /// Removes a station given by its address (upper case): nil when the text is not an address, else false
  /// when it was not there.
  @discardableResult
  public mutating func remove(address: some StringProtocol, from part: Part = .addressees) -> Bool? {
    guard let key = PackedCall.pack(address.utf8) else { return nil }
    return tries[part.rawValue].remove(key)
  }

  /// Whether a part holds the station with this address (upper case, SSID included: the form APRS-IS
  /// names addressees and senders in once upper-cased); false for text that is not an address.
  public func contains(address: some StringProtocol, in part: Part = .addressees) -> Bool {
    guard let key = PackedCall.pack(address.utf8) else { return false }
    return tries[part.rawValue].contains(key)
  }

  /// The number of stations in a part.
  public func count(of part: Part) -> Int { tries[part.rawValue].count }

  /// The stations of a part, sorted by their address bytes.
  public func stations(of part: Part) -> [String] { tries[part.rawValue].keys.map(PackedCall.string) }
}

extension FilterPlanner {
  /// Builds a planner from many addresses at once, e.g. every live station as the store reads them at
  /// start: each address costs 8 bytes while loading (no `String` or `StationAddress` is kept), and the
  /// planner is built in one pass over the sorted keys instead of one insert per station.
  public struct Loader: Sendable {
    private var keys: [UInt64] = []
    /// Addresses refused by ``add(address:)`` (not 1–9 of `-`, `0`–`9`, `A`–`Z`).
    public private(set) var rejected = 0

    /// An empty loader; `capacity`: the number of addresses expected, if known.
    public init(capacity: Int = 0) { keys.reserveCapacity(capacity) }

    /// Adds an address (upper case); false when it is not one (and counted in ``rejected``).
    @discardableResult
    public mutating func add(address: some StringProtocol) -> Bool {
      guard let key = PackedCall.pack(address.utf8) else {
        rejected += 1
        return false
      }
      keys.append(key)
      return true
    }

    /// The addresses added so far (duplicates counted).
    public var count: Int { keys.count }

    /// A planner holding every address added as addressees (`g/`), and also as senders (`b/`) when
    /// `trackingSenders`; both parts share their storage until one of them changes.
    public consuming func planner(
      trackingSenders: Bool, model: AddresseeModel = .callsigns, senderWeight: Double = 20
    ) -> FilterPlanner {
      var planner = FilterPlanner(model: model, senderWeight: senderWeight)
      keys.sort()  // in place: the trie below then reads them in order without a copy
      let trie = PrefixTrie(keys: keys)
      keys = []
      planner.tries[Part.addressees.rawValue] = trie
      if trackingSenders { planner.tries[Part.senders.rawValue] = trie }
      return planner
    }
  }
}
