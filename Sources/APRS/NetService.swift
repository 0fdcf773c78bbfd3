/// An APRS group service a station can join through messages (issue "nets and rooms"): its call, the texts of its
/// commands and its rules, as each service documents them. Pure: the texts only, nothing sent.
///
/// - CQSRVR (its own page, aprs-is.net "CQ Server", by AE5PL): a NUMBERED message `CQ <group> <text>` posts the
///   text to every registered member of the group and registers the sender with it; `U <group>` unregisters.
///   `CQ` and the group are one word each, any case (the service upper-cases them). One `CQ` per group per
///   30 minutes. The service ACKs the command and answers `Message has been sent to <GROUP>` or
///   `Removed from <GROUP>`; members receive an unnumbered copy from the original sender, gated `qAO,CQSRVR`
///   (``NetFanOut``).
/// - ANSRVR (the nets' own instructions, e.g. #APRSThursday's; ANSRVR publishes no command page we could read):
///   `CQ <group> <text>` posts and registers for 12 hours; `U <group>` leaves; `K <group>` joins without posting
///   (as the net clients of 2026 send it). The service answers `N:<GROUP> …` and members receive each post from its
///   original sender as `N:<GROUP> <text>` (``NetFanOut``).
public enum NetService: String, Sendable, CaseIterable {
  case ansrvr = "ANSRVR"
  case cqsrvr = "CQSRVR"

  /// The service's call, the addressee of its commands.
  public var call: String { rawValue }

  /// The least time between two posts to one group (ms): CQSRVR's "one CQ groupname message per 30 minutes";
  /// nil where the service documents none.
  public var postIntervalMs: Int64? {
    switch self {
    case .cqsrvr: 30 * 60_000
    case .ansrvr: nil
    }
  }

  /// How long a membership lasts after the last post (ms): ANSRVR's 12 hours; nil where the service documents
  /// no lapse (CQSRVR: until `U`).
  public var membershipMs: Int64? {
    switch self {
    case .ansrvr: 12 * 3_600_000
    case .cqsrvr: nil
    }
  }

  /// The text that posts `text` to `group` and registers the sender: `CQ GROUP text` (the group upper case).
  /// Nil when the group is not one word of letters and digits or the whole would not fit an APRS message
  /// (67 characters, APRS101 ch. 14).
  public func postText(group: String, text: String) -> String? {
    guard let group = Self.groupName(group) else { return nil }
    let whole = "CQ \(group) \(text)"
    guard !text.isEmpty, whole.utf8.count <= Self.maximumTextLength else { return nil }
    return whole
  }

  /// The text that joins `group` without posting: ANSRVR's `K GROUP`; nil for a service without a silent join
  /// (CQSRVR registers only with a `CQ`) or a group that is not one word of letters and digits.
  public func silentJoinText(group: String) -> String? {
    guard self == .ansrvr, let group = Self.groupName(group) else { return nil }
    return "K \(group)"
  }

  /// The text that leaves `group`: `U GROUP`.
  public func leaveText(group: String) -> String? {
    Self.groupName(group).map { "U \($0)" }
  }

  /// The longest message text APRS carries (APRS101 ch. 14: 67 characters).
  public static let maximumTextLength = 67

  /// `group` upper-cased when it is one word of 1–9 letters and digits (the length of an APRS call field, so a
  /// group fits wherever a call does), nil otherwise.
  public static func groupName(_ group: String) -> String? {
    let upper = group.uppercased()
    let bytes = Array(upper.utf8)
    guard (1...9).contains(bytes.count), bytes.allSatisfy({ ASCII.isLetter($0) || ASCII.isDigit($0) }) else {
      return nil
    }
    return upper
  }

  /// The service whose call `address` is (any case), nil for any other.
  public init?(call address: some StringProtocol) {
    self.init(rawValue: StationAddress.canonical(address))
  }
}
