import APRS
import Store

/// The stations whose own transmissions the listener follows (settings `ackPolicy:"fallback"` and `trackSent`,
/// docs/design.md "Hearing the station's own radio"), as the registration watcher read them and the last planned
/// `#filter` line took them: a plain value the ``StationRegistry`` keeps and the router asks.
///
/// A station counts as followed only while the wanted filter line carries its `b/` entry
/// (``OwnTransmissionPlan/followed``): one the line had no room for falls back (its messages ACKed as under
/// `server`, its radio's sends not stored), as does one the watcher read but no line was planned for yet.
struct OwnTransmissions: Sendable, Equatable {
  /// The stations that asked, by canonical address.
  private(set) var stations: [String: OwnTransmissionStation] = [:]
  /// The stations the wanted line follows (a subset of ``stations``).
  private(set) var followed: Set<String> = []
  /// The stations the wanted line had no room for, oldest request first.
  private(set) var fellBack: [String] = []

  /// No station asked.
  static let empty = OwnTransmissions()

  /// The stations `read` (``Database/stationsFollowingOwnTransmissions(heardSince:)``); none followed yet.
  init(_ read: [OwnTransmissionStation] = []) {
    for station in read { stations[station.address] = station }
  }

  /// Whether the stations that asked are those of `other` (what they asked, not what a plan made of it).
  func asks(like other: OwnTransmissions) -> Bool { stations == other.stations }

  /// The filter planner's requests (``FilterPlanner/OwnTransmissionRequest``); a stored address that does not
  /// parse (none should) is left out.
  var requests: [FilterPlanner.OwnTransmissionRequest] {
    stations.values.compactMap { station in
      guard let address = try? StationAddress(parsing: station.address) else { return nil }
      return FilterPlanner.OwnTransmissionRequest(station: address, since: station.since)
    }
  }

  /// What a planned line made of the requests.
  mutating func planned(_ plan: OwnTransmissionPlan) {
    followed = Set(plan.followed)
    fellBack = plan.fellBack
  }

  /// Whether `address` (canonical) is followed with `ackPolicy:"fallback"`: its ACKs wait for its radio.
  func holdsAcks(of address: String) -> Bool {
    followed.contains(address) && stations[address]?.fallback == true
  }

  /// Whether `address` (canonical) is followed with `trackSent`: what its radio sends is stored.
  func tracksSent(of address: String) -> Bool {
    followed.contains(address) && stations[address]?.trackSent == true
  }

  /// Whether no station is followed (nothing to look up per line).
  var isEmpty: Bool { followed.isEmpty }

  /// Whether `address` (canonical) is followed at all: its lines may carry its own answers.
  func follows(_ address: String) -> Bool { followed.contains(address) }
}
