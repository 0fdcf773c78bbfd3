/// A group message a net service fanned out to a member (``NetService``), or the service's own answer to the
/// member, recognised in a packet addressed to the member.
///
/// - CQSRVR's copy: an UNNUMBERED message from the original sender, gated by the service (`qAO,CQSRVR` in the
///   path), whose text is the post as sent: `AE5PL-10>APJIC1,qAO,CQSRVR::W5EJL-1  :CQ MYTEST Listening…`. The room
///   is `CQSRVR/MYTEST`, the peer the original sender, the text what follows the group.
/// - The service's answers (from the service's call itself): `Message has been sent to MYTEST`, `Removed from
///   MYTEST`: ``Kind/answer``, the room named by the group in the text.
///
/// Nil for anything else (a direct message, a copy without the service in its path, a numbered copy).
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
  public var room: String { "\(service.call)/\(group)" }

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
}
