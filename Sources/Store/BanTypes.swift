import Platform

/// What a ban applies to (`bans.kind`).
public enum BanKind: String, Sendable, Hashable, CaseIterable {
  /// An APRS sender (``CallList`` rules: a bare call bans every SSID).
  case call
  /// A block of client addresses.
  case address
}

/// What a ban names: a call or an address block, parsed from what an operator types
/// (`aprs-cloud ban KJ7ABC`, `ban 203.0.113.7`, `ban 2001:db8:1::/48`).
public enum BanTarget: Sendable, Hashable, CustomStringConvertible {
  /// An upper-case call, optionally with an SSID.
  case call(String)
  /// An address block.
  case address(BannedBlock)

  /// A call (``CallList`` syntax), or an IPv4 or IPv6 address with an optional `/prefix`: an IPv4 address
  /// alone is its /32, an IPv6 address alone its /64 (one subscriber's prefix, as the limits count it).
  /// Nil for anything else.
  public init?(parsing text: String) {
    if let block = BannedBlock(parsing: text) {
      self = .address(block)
    } else if let call = CallList.normalized(text) {
      self = .call(call)
    } else {
      return nil
    }
  }

  public var kind: BanKind {
    switch self {
    case .call: .call
    case .address: .address
    }
  }

  /// The stored `bans.value`: the call, or the block in CIDR form (upper case, as the table wants).
  public var value: String {
    switch self {
    case .call(let call): call
    case .address(let block): block.description.uppercased()
    }
  }

  public var description: String {
    switch self {
    case .call(let call): call
    case .address(let block): block.description
    }
  }
}

/// A block of client addresses: the first `prefixLength` bits of an IPv4 or IPv6 address.
public struct BannedBlock: Sendable, Hashable, CustomStringConvertible {
  /// 4 or 16 bytes, network order, the bits past `prefixLength` zero.
  public let bytes: [UInt8]
  public let prefixLength: Int

  /// `address` (4 or 16 bytes) cut to `prefixLength` bits; nil for another byte count or a prefix out of range.
  public init?(_ address: [UInt8], prefixLength: Int) {
    // A /0 would ban every client: refused.
    guard prefixLength >= 1, let masked = IPAddress.masked(address, prefixLength: prefixLength) else {
      return nil
    }
    self.bytes = masked
    self.prefixLength = prefixLength
  }

  /// `ADDRESS` or `ADDRESS/PREFIX` (any case; IPv6 in any RFC 4291 form).
  public init?(parsing text: String) {
    guard let typed = Self.split(text) else { return nil }
    var prefix = typed.address.isIPv4 ? 32 : 64
    if let given = typed.prefix {
      guard let length = given.length else { return nil }
      prefix = length
    }
    self.init(typed.address.bytes, prefixLength: prefix)
  }

  /// `ADDRESS[/PREFIX]` as typed: the address, and the prefix's text with its length (nil when the text is not
  /// an ASCII number); nil when `text` does not start with an address.
  private static func split(_ text: String) -> (address: IPAddress, prefix: (text: Substring, length: Int?)?)?
  {
    let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard let first = parts.first, let address = IPAddress(String(first)) else { return nil }
    guard parts.count == 2 else { return (address, nil) }
    let length = parts[1].allSatisfy(\.isASCII) ? Int(parts[1]) : nil
    return (address, (parts[1], length))
  }

  /// The broadest IPv4 block a ban may name (`aprs-cloud ban`): a /8.
  public static let broadestIPv4Prefix = 8
  /// The broadest IPv6 block a ban may name: a /16.
  public static let broadestIPv6Prefix = 16

  /// Why the address block an operator typed (`ADDRESS/PREFIX`) is not banned as written: a prefix that is not a
  /// number for the address's family, a block broader than ``broadestIPv4Prefix`` or ``broadestIPv6Prefix``
  /// (half of the IPv4 Internet is not one abuser), or bits set past the prefix (`10.0.0.0/4` is `0.0.0.0/4`: the
  /// ban would not be what was typed). Nil when it may be banned, or when `text` is no address at all.
  public static func refusal(_ text: String) -> String? {
    guard let typed = split(text), let given = typed.prefix else { return nil }
    let address = typed.address
    let family = address.isIPv4 ? "IPv4" : "IPv6"
    let longest = address.isIPv4 ? 32 : 128
    guard let prefix = given.length, (0...longest).contains(prefix) else {
      return "'/\(given.text)' is not a prefix length of an \(family) address (0 to \(longest))"
    }
    let broadest = address.isIPv4 ? broadestIPv4Prefix : broadestIPv6Prefix
    guard prefix >= broadest else {
      return "/\(prefix) is too broad: a ban names at most an \(family) /\(broadest)"
    }
    if let block = BannedBlock(address.bytes, prefixLength: prefix), block.bytes != address.bytes {
      return
        "\(text.prefix { $0 != "/" }) has bits set past its /\(prefix): the block is \(block); name it so"
    }
    return nil
  }

  /// Whether `address` (4 or 16 bytes) is inside the block.
  public func contains(_ address: [UInt8]) -> Bool {
    guard address.count == bytes.count else { return false }
    return BannedBlock(address, prefixLength: prefixLength)?.bytes == bytes
  }

  /// CIDR form: `203.0.113.0/24`, `2001:db8:1::/48` (the IPv6 form `IPAddress` prints).
  public var description: String {
    (IPAddress(bytes: bytes)?.description ?? "?") + "/\(prefixLength)"
  }
}

/// One ban as stored (`bans`).
public struct Ban: Sendable, Hashable {
  public var target: BanTarget
  /// Why, as the operator wrote it ("" when not given).
  public var reason: String
  /// When it was made (ms).
  public var createdAt: Int64
  /// When it ends (ms); nil: until lifted.
  public var until: Int64?

  public init(target: BanTarget, reason: String = "", createdAt: Int64, until: Int64? = nil) {
    self.target = target
    self.reason = reason
    self.createdAt = createdAt
    self.until = until
  }

  /// Whether it applies at `now` (ms).
  public func isActive(at now: Int64) -> Bool { until.map { now < $0 } ?? true }
}

/// The bans in force at one moment, for the checks on the hot paths (the writer's batch, the API's request).
public struct ActiveBans: Sendable, Equatable {
  /// Banned calls (``CallList`` matching).
  public let calls: CallList
  /// Banned address blocks.
  public let blocks: [BannedBlock]

  public static let none = ActiveBans(calls: .empty, blocks: [])

  public init(calls: CallList, blocks: [BannedBlock]) {
    self.calls = calls
    self.blocks = blocks
  }

  /// Whether `sender` (an APRS source call, any case) is banned.
  public func bans(sender: some StringProtocol) -> Bool { calls.matches(sender) }

  /// The block that holds `address` (4 or 16 bytes), if any.
  public func block(holding address: [UInt8]) -> BannedBlock? { blocks.first { $0.contains(address) } }

  public var isEmpty: Bool { calls.isEmpty && blocks.isEmpty }
}
