/// When a bulletin or announcement a station sends goes out again (issue "nets and rooms": group and bulletin
/// sends), as XRouter's APRS message server documents it: bulletins (`BLN0`–`BLN9`, optionally followed by a
/// group of up to 5 characters: `BLN3WX`) every 20 minutes for 4 hours; announcements (`BLNA`–`BLNZ` and a
/// group) once an hour for 4 days. Always unnumbered, never retried for an ACK. Pure: times in, times out (ms, any
/// one clock).
public struct BulletinSchedule: Hashable, Sendable {
  /// Which of the two.
  public enum Kind: String, Hashable, Sendable {
    /// `BLN0`–`BLN9` plus a group.
    case bulletin
    /// `BLNA`–`BLNZ` plus a group.
    case announcement
  }

  /// Bulletin or announcement.
  public let kind: Kind
  /// The addressee, upper case (`BLN3WX`).
  public let addressee: String

  /// The schedule of sends to `addressee` (any case): nil unless it is `BLN`, one digit or letter, and at most 5
  /// letters or digits of group (9 characters in all, the APRS addressee field).
  public init?(addressee: some StringProtocol) {
    let upper = addressee.uppercased()
    let bytes = Array(upper.utf8)
    guard (4...9).contains(bytes.count), bytes.starts(with: Array("BLN".utf8)) else { return nil }
    guard bytes[4...].allSatisfy({ ASCII.isLetter($0) || ASCII.isDigit($0) }) else { return nil }
    let line = bytes[3]
    if ASCII.isDigit(line) {
      kind = .bulletin
    } else if ASCII.isLetter(line) {
      kind = .announcement
    } else {
      return nil
    }
    self.addressee = upper
  }

  /// The time between two sends (ms): 20 minutes for a bulletin, an hour for an announcement.
  public var intervalMs: Int64 { kind == .bulletin ? 20 * 60_000 : 3_600_000 }

  /// How long it is sent (ms): 4 hours for a bulletin, 4 days for an announcement.
  public var durationMs: Int64 { kind == .bulletin ? 4 * 3_600_000 : 4 * 86_400_000 }

  /// How many times it goes out in all (the first send included): 13 for a bulletin (0, 20, … 240 minutes),
  /// 97 for an announcement.
  public var sendCount: Int { Int(durationMs / intervalMs) + 1 }

  /// When the send after the one at `last` is due, for a schedule begun at `start`; nil once the duration is
  /// over. A `last` before `start` (a clock step) gives the first send after `start`.
  public func nextSend(after last: Int64, start: Int64) -> Int64? {
    let elapsed = max(0, last - start)
    let next = start + (elapsed / intervalMs + 1) * intervalMs
    return next - start <= durationMs ? next : nil
  }
}
