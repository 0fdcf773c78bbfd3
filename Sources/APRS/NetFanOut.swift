/// A group message a net service fanned out to a member (``NetService``), or the service's own answer to the
/// member, recognised in a packet addressed to the member.
///
/// - CQSRVR's copy: an UNNUMBERED message from the original sender, gated by the service (`qAO,CQSRVR` in the
///   path), whose text is the post as sent: `AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :CQ MYTEST Listening…`. The room
///   is `CQSRVR/MYTEST`, the peer the original sender, the text what follows the group.
/// - CQSRVR's answers (from the service's call itself): `Message has been sent to MYTEST`, `Removed from
///   MYTEST`: ``Kind/answer``, the room named by the group in the text.
/// - ANSRVR's copy: a message from the original sender whose text is `N:GROUP text`
///   (`HK3BCA-7>APWW11,TCPIP,KB7COX-10*::KJ7STI-1 :N:HOTG …`, as igates have logged it); numbered or not.
/// - ANSRVR's answers: from ANSRVR itself, `N:GROUP text` (`ANSRVR>APWW11,…::AA1PR-9  :N:HOTG 161 Messages
///   Sent{JL}`, Dire Wolf's logs).
///
/// Nil for anything else (a direct message, a CQSRVR copy without the service in its path or numbered). Whether
/// a packet that has the form is really the fan-out of a group is for the station to say: only a member of the
/// room reads it as one (the listener's router).
public struct NetFanOut: Hashable, Sendable {
  /// What it is.
  public enum Kind: String, Hashable, Sendable {
    /// A member's post, fanned out.
    case post
    /// The service's answer to a command.
    case answer
  }

  /// The service.
  public var service: NetService
  /// The group, upper case.
  public var group: String
  /// Who wrote it: the original sender of a post, the service for an answer (``AddressedPacket/sender``).
  public var peer: String
  /// The text: a post's without `CQ GROUP `, an answer's whole.
  public var text: String
  /// Post or answer.
  public var kind: Kind

  /// The room, `SERVICE/GROUP` (`CQSRVR/MYTEST`).
  public var room: NetRoom { NetRoom(service: service, group: group) }

  /// Makes a value from its parts (tests).
  public init(service: NetService, group: String, peer: String, text: String, kind: Kind) {
    self.service = service
    self.group = group
    self.peer = peer
    self.text = text
    self.kind = kind
  }

  /// The fan-out or answer `packet` carries, nil when it carries none.
  public init?(_ packet: TNC2Packet) {
    guard let message = AddressedPacket.classify(packet).addressed, message.kind == .message else {
      return nil
    }
    if let (group, rest) = Self.notice(message.text) {
      // ANSRVR's form: from the service an answer, from anyone else a post.
      let kind: Kind = NetService(call: message.sender) == .ansrvr ? .answer : .post
      self.init(service: .ansrvr, group: group, peer: message.sender, text: rest, kind: kind)
      return
    }
    if let service = NetService(call: message.sender) {
      // The service's own answer names the group last.
      for prefix in ["Message has been sent to ", "Removed from "] where message.text.hasPrefix(prefix) {
        guard let group = NetService.groupName(String(message.text.dropFirst(prefix.count))) else {
          return nil
        }
        self.init(service: service, group: group, peer: message.sender, text: message.text, kind: .answer)
        return
      }
      return nil
    }
    // A post gated by the service: `qAO,SERVICE` in the path, unnumbered, `CQ GROUP text`.
    guard message.msgno == nil, let q = packet.path.firstIndex(where: { $0.uppercased() == "QAO" }),
      q + 1 < packet.path.count, let service = NetService(call: packet.path[q + 1])
    else { return nil }
    let words = message.text.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
    guard words.count == 3, words[0].uppercased() == "CQ", let group = NetService.groupName(String(words[1]))
    else { return nil }
    self.init(service: service, group: group, peer: message.sender, text: String(words[2]), kind: .post)
  }

  /// `N:GROUP text` split into the group and the text (empty when there is none), nil for any other text.
  static func notice(_ text: String) -> (group: String, text: String)? {
    guard text.hasPrefix("N:") else { return nil }
    let rest = text.dropFirst(2)
    let word = rest.prefix { $0 != " " }
    guard let group = NetService.groupName(String(word)) else { return nil }
    return (group, String(rest.dropFirst(word.count).drop { $0 == " " }))
  }
}
