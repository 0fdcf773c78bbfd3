import Platform

/// What one delivery endpoint is bounded by in ``DeliverySlots``: the network or the registrable domain its URL
/// names, so that many endpoints one party controls (paths, ports, sub-domains, the addresses of one network)
/// share one per-group cap and one ``EndpointHistory`` entry. Pure parsing; nothing is resolved.
///
/// - An IPv4 literal: its /24 (`203.0.113.0/24`), the block one site or small customer usually holds; the width
///   the API's per-network limits use (`ClientAddress.networkPrefix`). The shorthand forms libcurl also takes as
///   IPv4 (`127.1`, `2130706433`, `0x7f000001`) are read as the address they name.
/// - An IPv6 literal (in brackets): its /48 (`2001:db8:1::/48`), what a tunnel broker or an ISP hands a customer
///   for free (the same width as `ClientAddress.networkPrefix`; a /64 would give one such customer 65,536
///   groups). An address that carries an IPv4 one (IPv4-mapped, NAT64, 6to4: `IPAddress.embeddedIPv4`) is the
///   /24 of that IPv4 address, which is where the connection goes.
/// - A host name: its registrable domain, approximated without the public-suffix list (none is available
///   offline): the last two labels (`up.example.com` → `example.com`), or the last three when the top-level
///   label is two letters (a country code) and the second-to-last is one of ``countrySecondLevels``
///   (`push.example.co.uk` → `example.co.uk`). A single label is itself. Lower case, the root's trailing dot
///   dropped. The approximation errs toward merging: private suffixes (a hosting platform's shared domain)
///   become one group for all their customers, which only makes their caps stricter.
/// - Anything else (no `scheme://`, an empty or malformed host, a bad port, a zone index, bytes outside
///   letters, digits, `-`, `_` and `.`): ``unparsable``, one group for all of it, so junk cannot escape a cap.
///
/// The scheme and the port never matter (seven ports of one host are one group); a user name before `@` is
/// skipped (the host after it is where the connection goes).
enum EndpointGroup: Hashable, Sendable, CustomStringConvertible {
  /// The network of an address literal: the address with every bit past `prefixLength` cleared (24 for IPv4,
  /// 48 for IPv6).
  case network(IPAddress, prefixLength: Int)
  /// A host name's registrable domain (approximated as described above), lower case.
  case domain(String)
  /// A URL this parser cannot read.
  case unparsable

  /// The prefix lengths of ``network(_:prefixLength:)`` for IPv4 and IPv6 (the API's network width).
  static let networkPrefix = (ipv4: 24, ipv6: 48)

  /// Second-level labels that are public suffixes under many country codes (`co.uk`, `com.au`, `net.br`,
  /// `org.nz`, `gov.in`, `ac.jp`, `edu.pl`): a name under `<one of these>.<two letters>` keeps three labels.
  static let countrySecondLevels: Set<String> = ["ac", "co", "com", "edu", "gov", "net", "org"]

  /// The group of `url` (`scheme://[user@]host[:port][/path][?query][#fragment]`), as described above.
  init(url: String) {
    guard let host = Self.host(of: url) else {
      self = .unparsable
      return
    }
    self = Self.group(ofHost: host)
  }

  /// The group of a bare host (`example.com`, `203.0.113.7`, `[2001:db8::1]`, `2001:db8::1`), as described
  /// above; ``unparsable`` for anything else.
  static func group(ofHost rawHost: String) -> EndpointGroup {
    var host = rawHost.lowercased()
    if host.hasPrefix("[") || host.contains(":") {
      guard let address = IPAddress(host), !address.isIPv4 else { return .unparsable }
      return network(of: address)
    }
    if host.hasSuffix(".") { host.removeLast() }
    guard !host.isEmpty, host.utf8.count <= 253 else { return .unparsable }
    let labels = host.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.allSatisfy({ (1...63).contains($0.utf8.count) && $0.utf8.allSatisfy(isNameByte) }) else {
      return .unparsable
    }
    if let address = IPAddress(host) { return network(of: address) }
    // No top-level domain is numeric: a name ending in a number is an IPv4 literal in a shorthand form
    // (`127.1`, `0x7f.1`), as libcurl reads it, or junk.
    if let last = labels.last, isNumericLabel(last) {
      guard let address = IPAddress(inetAton: host) else { return .unparsable }
      return network(of: address)
    }
    return .domain(registrableDomain(labels.map(String.init)))
  }

  /// `address`'s network: an IPv4 address (or the IPv4 address an IPv6 one carries) by its /24, an IPv6 address
  /// by its /48.
  static func network(of address: IPAddress) -> EndpointGroup {
    let target = address.embeddedIPv4 ?? address
    let prefix = target.isIPv4 ? networkPrefix.ipv4 : networkPrefix.ipv6
    guard let bytes = IPAddress.masked(target.bytes, prefixLength: prefix),
      let masked = IPAddress(bytes: bytes)
    else { return .unparsable }
    return .network(masked, prefixLength: prefix)
  }

  /// The approximated registrable domain of a name's labels (lower case, at least one).
  static func registrableDomain(_ labels: [String]) -> String {
    var kept = 2
    if labels.count >= 3, let top = labels.last, top.utf8.count == 2, top.utf8.allSatisfy(isLetter),
      countrySecondLevels.contains(labels[labels.count - 2])
    {
      kept = 3
    }
    return labels.suffix(kept).joined(separator: ".")
  }

  /// `203.0.113.0/24`, `2001:db8:1::/48`, `example.co.uk`, `unparsable`: for logs and test names.
  var description: String {
    switch self {
    case .network(let address, let prefixLength): "\(address)/\(prefixLength)"
    case .domain(let name): name
    case .unparsable: "unparsable"
    }
  }

  /// The host of `url` (brackets kept around an IPv6 address), or nil when the authority is malformed: no
  /// `://`, an empty host, an unclosed bracket, something other than `:digits` after the host.
  static func host(of url: String) -> String? {
    let bytes = Array(url.utf8)
    guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")), colon > 0,
      bytes[colon...].starts(with: Array("://".utf8)),
      bytes[..<colon].allSatisfy({ isLetter($0) || isDigit($0) || "+-.".utf8.contains($0) })
    else { return nil }
    let rest = bytes[(colon + 3)...]
    let end = rest.firstIndex { "/?#".utf8.contains($0) } ?? rest.endIndex
    var authority = rest[rest.startIndex..<end]
    if let at = authority.lastIndex(of: UInt8(ascii: "@")) { authority = authority[(at + 1)...] }
    let hostBytes: ArraySlice<UInt8>
    let after: ArraySlice<UInt8>
    if authority.first == UInt8(ascii: "[") {
      guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
      hostBytes = authority[...close]
      after = authority[(close + 1)...]
    } else if let portColon = authority.firstIndex(of: UInt8(ascii: ":")) {
      hostBytes = authority[..<portColon]
      after = authority[portColon...]
    } else {
      hostBytes = authority
      after = []
    }
    if !after.isEmpty {
      let port = after.dropFirst()
      guard after.first == UInt8(ascii: ":"), port.count <= 5, port.allSatisfy(isDigit) else { return nil }
    }
    guard !hostBytes.isEmpty else { return nil }
    return String(decoding: hostBytes, as: UTF8.self)
  }

  private static func isNumericLabel(_ label: Substring) -> Bool {
    let bytes = Array(label.utf8)
    if bytes.count > 2, bytes[0] == UInt8(ascii: "0"), bytes[1] == UInt8(ascii: "x") {
      return bytes[2...].allSatisfy { isDigit($0) || (0x61...0x66).contains($0) }
    }
    return bytes.allSatisfy(isDigit)
  }

  private static func isNameByte(_ byte: UInt8) -> Bool {
    isLetter(byte) || isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
  }

  private static func isLetter(_ byte: UInt8) -> Bool {
    (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
  }

  private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
}
