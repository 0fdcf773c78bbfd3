// The records the listener, the push sender and the store's own maintenance publish in `meta`, which
// `/health`, `/metrics` and `aprs-cloud status` read: each a typed value with its one encoding beside it.
// These are the only places that know the `listener.*`, `push.*` and `maintenance.*` key names.
//
// A record is stored as one `meta` row per field (text), so processes of different versions get along: a
// decoder takes a missing or garbled field as its default and ignores keys it does not know, and an encoder
// writes every field it knows.

import APRS

// MARK: The listener

/// The listener's state as `aprs-listener` publishes it (every few seconds and on every state change, never per
/// line), stored as `listener.<field>` rows.
public struct ListenerStatus: Sendable, Equatable {
  /// The connection's state (`online`, `backingOff`, …); nil when no listener ever published on this database.
  public var state: String?
  /// Logged in to APRS-IS.
  public var connected: Bool
  /// Logged in verified.
  public var verified: Bool
  /// Nothing the listener sends gets through (no login, or an unverified one): no ACKs. True unless published
  /// as false.
  public var receiveOnly: Bool
  /// The server of the current connection (`HOST:PORT`), nil when none.
  public var server: String?
  /// The login name in use, nil when unknown.
  public var login: String?
  /// Registered stations the filter covers (`g/` part).
  public var filterSize: Int
  /// Length of the filter's one `#filter` line, CR LF included, bytes (at most 510).
  public var filterBytes: Int
  /// Entries on the filter line (exact stations and prefixes, `g/` and `b/` parts).
  public var filterEntries: Int
  /// Stations matched by an exact entry rather than a prefix (both parts).
  public var filterExactStations: Int
  /// When the last line was read, epoch ms; nil before the first.
  public var lastLineAt: Int64?
  /// Lines per second over the last minute (published with two decimals, see `decimal(_:)`).
  public var lineRate: Double
  /// When this status was published, epoch ms.
  public var updatedAt: Int64?
  /// When the listener started, epoch ms.
  public var startedAt: Int64?
  /// Why its last attempt to connect failed or its last connection ended (`HOST:PORT: reason`), nil once it
  /// logged in again (or when nothing was published).
  public var lastError: String?
  /// Its counters since it started.
  public var counts: ListenerCounts
  /// The transmit budget (`[send] transmitBudgetPerMinute`) is spent: copies of sent messages that are due wait
  /// their turn.
  public var sendBudgetFull: Bool
  /// The last hour, minute by minute (the status page's chart).
  public var history: ActivityHistory
  /// The stations whose own transmissions the filter follows (settings `ackPolicy:"fallback"`, `trackSent`),
  /// sorted (docs/design.md "Hearing the station's own radio").
  public var ownFollowed: [String]
  /// The stations that asked for it and that the filter had no room for: their messages are ACKed as under
  /// `server`, and what their radios send is not stored. In the planner's order (the oldest request first).
  public var ownFellBack: [String]

  /// A status; every field defaults to what a reader assumes when nothing was published.
  public init(
    state: String? = nil, connected: Bool = false, verified: Bool = false, receiveOnly: Bool = true,
    server: String? = nil, login: String? = nil, filterSize: Int = 0, filterBytes: Int = 0,
    filterEntries: Int = 0, filterExactStations: Int = 0, lastLineAt: Int64? = nil, lineRate: Double = 0,
    updatedAt: Int64? = nil, startedAt: Int64? = nil, lastError: String? = nil,
    counts: ListenerCounts = ListenerCounts(), sendBudgetFull: Bool = false,
    history: ActivityHistory = ActivityHistory(), ownFollowed: [String] = [], ownFellBack: [String] = []
  ) {
    self.ownFollowed = ownFollowed
    self.ownFellBack = ownFellBack
    self.state = state
    self.connected = connected
    self.verified = verified
    self.receiveOnly = receiveOnly
    self.server = server
    self.login = login
    self.filterSize = filterSize
    self.filterBytes = filterBytes
    self.filterEntries = filterEntries
    self.filterExactStations = filterExactStations
    self.lastLineAt = lastLineAt
    self.lineRate = lineRate
    self.updatedAt = updatedAt
    self.startedAt = startedAt
    self.lastError = lastError
    self.counts = counts
    self.sendBudgetFull = sendBudgetFull
    self.history = history
  }

  /// `value` with two decimals, as `lineRate` is published and shown (`12.50`; `0.00` for anything not a
  /// positive finite number). Without Foundation.
  public static func decimal(_ value: Double) -> String {
    guard value.isFinite, value > 0 else { return "0.00" }
    let hundredths = Int((value * 100).rounded())
    let fraction = hundredths % 100
    return "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + String(fraction)
  }
}

/// A counter the listener publishes, counted since it started. `/health` shows them under these names, in this
/// order (`allCases`).
public enum ListenerCounter: String, Sendable, CaseIterable {
  /// Lines read from APRS-IS (packets, server comments and over-long lines).
  case linesRead
  /// Messages stored for registered stations.
  case messagesStored
  /// Retransmitted copies of stored messages: not stored or pushed again (still ACKed).
  case duplicates
  /// Acks and rejs recorded for messages that registered stations sent.
  case receipts
  /// ACK lines sent to APRS-IS for stored messages.
  case acksSent
  /// ACKs held back because the same message was ACKed less than 30 s before.
  case acksSuppressed
  /// ACKs not sent: no connection, or the outgoing buffer was full.
  case acksDropped
  /// Packet lines dropped because the storage queue was full.
  case drops
  /// Lines that are not TNC2 packets, over-long ones included.
  case invalidLines
  /// Lines over 512 bytes, skipped.
  case tooLong
  /// Packets that led to nothing: not a message for a registered station, bulletins, ….
  case skipped
  /// Messages, acks and rejs for addressees that are not registered (the filter's prefixes let them
  /// through, or APRS-IS's own delivery rules): dropped after the exact match. Also counted in `skipped`.
  case notForUs
  /// APRS-IS connections that ended and were made again.
  case reconnects
  /// Messages dropped because their addressee blocks the sender (station settings): not stored, ACKed or pushed.
  case blocked
  /// Messages dropped because the operator banned their sender (`aprs-cloud ban`): not stored, ACKed or pushed.
  case banned
  /// Subscription entries stored, by kind (``subscriptionEntries(_:)``): bulletins and announcements.
  case bulletinEntries
  /// Subscription entries stored: messages to group calls.
  case groupEntries
  /// Subscription entries stored: NWS alerts naming a subscribed zone.
  case nwsEntries
  /// Subscription entries stored: watched stations heard, silent or in an emergency.
  case watchEntries
  /// Messages to `fallback` stations that the station's own radio answered within the wait (`ack` or `rej` heard
  /// through an igate): ACKs the radio saved the server.
  case airAnswered
  /// ACKs sent for `fallback` stations because their radio was not heard answering within the wait.
  case fallbackAcks
  /// Subscription entries stored: the entries of nets' rooms (fan-out and the services' answers).
  case netEntries

  /// The counter of the subscription entries of `kind` stored.
  public static func subscriptionEntries(_ kind: SubscriptionKind) -> ListenerCounter {
    switch kind {
    case .bulletin: .bulletinEntries
    case .group: .groupEntries
    case .nws: .nwsEntries
    case .watch: .watchEntries
    case .net: .netEntries
    }
  }

  /// Whether it is one of the subscription entries' counters (one metric family, by kind).
  public var isSubscriptionEntries: Bool {
    SubscriptionKind.allCases.contains { Self.subscriptionEntries($0) == self }
  }
}

/// The listener's counters, by `ListenerCounter` (0 for one never published).
public struct ListenerCounts: Sendable, Equatable {
  private var values: [ListenerCounter: Int] = [:]

  /// All zero.
  public init() {}

  /// The count of `counter`.
  public subscript(counter: ListenerCounter) -> Int {
    get { values[counter] ?? 0 }
    set { values[counter] = newValue }
  }

  public static func == (lhs: ListenerCounts, rhs: ListenerCounts) -> Bool {
    ListenerCounter.allCases.allSatisfy { lhs[$0] == rhs[$0] }
  }
}

extension ListenerStatus {
  /// The fields as stored: `listener.<rawValue>`, in the order they are written.
  enum Field: String, CaseIterable {
    case state, connected, verified, receiveOnly, server, login, filterSize, filterBytes, filterEntries
    case filterExactStations, lastLineAt, lineRate, updatedAt, startedAt, lastError, sendBudgetFull, history
    case ownFollowed, ownFellBack
  }

  /// Every key of the record starts with this.
  static let keyPrefix = "listener."

  /// The meta key of `field`.
  static func key(_ field: Field) -> String { keyPrefix + field.rawValue }

  /// The meta key of `counter`.
  static func key(_ counter: ListenerCounter) -> String { keyPrefix + counter.rawValue }

  /// Every field and counter as a meta row: flags `1`/`0`, absent values as `""`.
  var metaRows: [(key: String, value: String)] {
    var rows: [(key: String, value: String)] = Field.allCases.map { (Self.key($0), text(of: $0)) }
    for counter in ListenerCounter.allCases { rows.append((Self.key(counter), String(counts[counter]))) }
    return rows
  }

  private func text(of field: Field) -> String {
    switch field {
    case .state: state ?? ""
    case .connected: connected ? "1" : "0"
    case .verified: verified ? "1" : "0"
    case .receiveOnly: receiveOnly ? "1" : "0"
    case .server: server ?? ""
    case .login: login ?? ""
    case .filterSize: String(filterSize)
    case .filterBytes: String(filterBytes)
    case .filterEntries: String(filterEntries)
    case .filterExactStations: String(filterExactStations)
    case .lastLineAt: lastLineAt.map { String($0) } ?? ""
    case .lineRate: Self.decimal(lineRate)
    case .updatedAt: updatedAt.map { String($0) } ?? ""
    case .startedAt: startedAt.map { String($0) } ?? ""
    case .lastError: lastError ?? ""
    case .sendBudgetFull: sendBudgetFull ? "1" : "0"
    case .history: history.text
    case .ownFollowed: ownFollowed.joined(separator: " ")
    case .ownFellBack: ownFellBack.joined(separator: " ")
    }
  }

  /// Decodes the `listener.*` rows (by key). A missing or garbled field reads as its default (a flag is set
  /// only by `1`, except `receiveOnly`, cleared only by `0`); keys it does not know are ignored.
  init(metaRows rows: [String: String]) {
    func text(_ field: Field) -> String? { rows[Self.key(field)].flatMap { $0.isEmpty ? nil : $0 } }
    self.init(
      state: text(.state), connected: text(.connected) == "1", verified: text(.verified) == "1",
      receiveOnly: text(.receiveOnly) != "0", server: text(.server), login: text(.login),
      filterSize: StatusText.count(text(.filterSize)), filterBytes: StatusText.count(text(.filterBytes)),
      filterEntries: StatusText.count(text(.filterEntries)),
      filterExactStations: StatusText.count(text(.filterExactStations)),
      lastLineAt: StatusText.time(text(.lastLineAt)), lineRate: StatusText.rate(text(.lineRate)),
      updatedAt: StatusText.time(text(.updatedAt)), startedAt: StatusText.time(text(.startedAt)),
      lastError: text(.lastError), sendBudgetFull: text(.sendBudgetFull) == "1",
      history: ActivityHistory(text: text(.history) ?? ""),
      ownFollowed: StatusText.calls(text(.ownFollowed)), ownFellBack: StatusText.calls(text(.ownFellBack)))
    for counter in ListenerCounter.allCases {
      counts[counter] = StatusText.count(rows[Self.key(counter)])
    }
  }
}

// MARK: The push sender

/// A push provider's state as the push sender publishes it (`push.<platform>.state`).
public enum PushProviderState: Sendable, Equatable, CustomStringConvertible {
  /// Configured and sending.
  case ok
  /// Not configured or disabled (also what a reader assumes when nothing was published).
  case off
  /// Stopped by a configuration fault until the configuration is fixed and the program restarted.
  case stopped(reason: String)

  /// As stored and shown by `/health` and `aprs-cloud status`: `ok`, `off` or `stopped: <reason>`.
  public var description: String {
    switch self {
    case .ok: "ok"
    case .off: "off"
    case .stopped(let reason): reason.isEmpty ? "stopped" : "stopped: " + reason
    }
  }

  /// Decodes `description`; anything else reads as `.off`.
  init(published text: String) {
    if text == "ok" {
      self = .ok
    } else if text.hasPrefix("stopped") {
      let rest = text.dropFirst("stopped".count)
      self = .stopped(reason: String(rest.hasPrefix(": ") ? rest.dropFirst(2) : rest))
    } else {
      self = .off
    }
  }
}

/// What became of one push to one device, as the push sender counts it.
public enum PushOutcome: String, Sendable, CaseIterable {
  /// The provider accepted it.
  case accepted
  /// It will be sent again (a transient failure, or fresh credentials needed).
  case retried
  /// The provider refused it for good.
  case failed
  /// Not sent: the Web Push endpoint's host is at a loopback or private address (`allowPrivateEndpoints` off);
  /// the subscription is deleted (and counted in `tokensDeleted` too).
  case privateAddress
}

/// One provider's push counters since the push sender started.
public struct PushProviderCounters: Sendable, Equatable {
  /// Pushes by outcome name: the `PushOutcome`s this build counts, and any other a sender of another version
  /// published (non-negative).
  public var outcomes: [String: Int] = [:]
  /// Tokens deleted because the provider called them invalid.
  public var tokensDeleted = 0

  /// No pushes yet.
  public init() {}

  /// The count of `outcome`.
  public subscript(outcome: PushOutcome) -> Int {
    get { outcomes[outcome.rawValue] ?? 0 }
    set { outcomes[outcome.rawValue] = newValue }
  }
}

/// The push sender's counters since it started, stored as `push.<platform>.<outcome>`,
/// `push.<platform>.tokensDeleted`, `push.messages`, `push.notifications` and `push.subscriptions.<kind>` rows.
public struct PushCounters: Sendable, Equatable {
  /// Per provider; a provider without pushes may be absent (read as all zero).
  public var providers: [DevicePlatform: PushProviderCounters] = [:]
  /// Messages announced by pushes (a coalesced push announces several).
  public var messages = 0
  /// Coalesced pushes sent (one per station burst).
  public var notifications = 0
  /// Subscription entries announced by pushes, by the subscription's kind (absent reads as 0; a kind is
  /// published once it was counted).
  public var subscriptions: [SubscriptionKind: Int] = [:]
  /// Forwards by target kind and outcome (absent reads as 0; published once counted).
  public var forwards: [ForwardKind: [ForwardOutcomeKind: Int]] = [:]

  /// All zero.
  public init() {}

  /// The count of forwards to `kind` targets that ended in `outcome`.
  public subscript(forward kind: ForwardKind, outcome: ForwardOutcomeKind) -> Int {
    get { forwards[kind]?[outcome] ?? 0 }
    set { forwards[kind, default: [:]][outcome] = newValue }
  }

  /// The forwards in one line, by target type, each outcome that happened counted
  /// (`webhook 12 delivered, 1 retried; email 3 confirmation`), or `none yet`: what `aprs-cloud status` and the
  /// status page show.
  public var forwardSummary: String {
    let parts = ForwardKind.allCases.compactMap { kind -> String? in
      let counts = ForwardOutcomeKind.allCases.compactMap { outcome -> String? in
        let count = self[forward: kind, outcome]
        return count > 0 ? "\(count) \(String(outcome.rawValue.map { $0 == "_" ? " " : $0 }))" : nil
      }
      return counts.isEmpty ? nil : kind.rawValue + " " + counts.joined(separator: ", ")
    }
    return parts.isEmpty ? "none yet" : parts.joined(separator: "; ")
  }

  /// The counters of `platform`.
  public subscript(platform: DevicePlatform) -> PushProviderCounters {
    get { providers[platform] ?? PushProviderCounters() }
    set { providers[platform] = newValue }
  }

  public static func == (lhs: PushCounters, rhs: PushCounters) -> Bool {
    lhs.messages == rhs.messages && lhs.notifications == rhs.notifications
      && DevicePlatform.allCases.allSatisfy { lhs[$0] == rhs[$0] }
      && SubscriptionKind.allCases.allSatisfy { lhs.subscriptions[$0] ?? 0 == rhs.subscriptions[$0] ?? 0 }
      && ForwardKind.allCases.allSatisfy { kind in
        ForwardOutcomeKind.allCases.allSatisfy { lhs[forward: kind, $0] == rhs[forward: kind, $0] }
      }
  }
}

/// What became of one forward to one target (`aprs_cloud_forwards_total{type,outcome}`).
public enum ForwardOutcomeKind: String, Sendable, CaseIterable {
  /// The target took it (2xx; the SMTP server's 250).
  case delivered
  /// It will be sent again (5xx, 429, no answer, an SMTP 4xx).
  case retried
  /// Given up for this message (another 4xx); the target is kept.
  case failed
  /// The target is gone (404, 410, an SMTP 5xx for the address) and was disabled.
  case disabled
  /// The target's host is at a loopback or private address; disabled.
  case privateAddress = "private_address"
  /// A confirmation mail went out (email targets).
  case confirmation
}

/// What the push sender published: each provider's state, its warning, and the counters.
public struct PushStatus: Sendable, Equatable {
  /// Each provider's state; absent reads as `.off`.
  public var states: [DevicePlatform: PushProviderState] = [:]
  /// A provider that sends but is misconfigured says why (`push.<platform>.warning`; for example an APNs
  /// `production` setting every device's token contradicts); absent when it has nothing to say.
  public var warnings: [DevicePlatform: String] = [:]
  /// The counters.
  public var counters = PushCounters()

  /// A status; see the properties.
  public init(
    states: [DevicePlatform: PushProviderState] = [:], warnings: [DevicePlatform: String] = [:],
    counters: PushCounters = PushCounters()
  ) {
    self.states = states
    self.warnings = warnings
    self.counters = counters
  }

  /// The state of `platform` (`.off` when never published).
  public func state(of platform: DevicePlatform) -> PushProviderState { states[platform] ?? .off }
}

extension PushStatus {
  /// Every key of the record starts with this.
  static let keyPrefix = "push."

  /// The keys under `push.<platform>.` that are not outcome counters (`providerToken`: the APNs provider
  /// token senders before schema 4 kept here; migration 4 deletes it, and it is never read).
  private static let providerFields: Set<String> = [
    "state", "warning", "providerToken", "tokensDeleted", "messages", "notifications",
  ]

  /// The meta key of `platform`'s state.
  static func stateKey(_ platform: DevicePlatform) -> String { keyPrefix + platform.rawValue + ".state" }

  /// The meta key of `platform`'s warning (`""` when it has none).
  static func warningKey(_ platform: DevicePlatform) -> String { keyPrefix + platform.rawValue + ".warning" }

  /// The meta key of the count of subscription entries of `kind` announced by pushes.
  static func subscriptionKey(_ kind: SubscriptionKind) -> String {
    keyPrefix + "subscriptions." + kind.rawValue
  }

  /// The meta key of `platform`'s counter `name` (an outcome, or `tokensDeleted`).
  static func counterKey(_ platform: DevicePlatform, _ name: String) -> String {
    keyPrefix + platform.rawValue + "." + name
  }

  /// Decodes the `push.*` rows (by key). Garbled counters read as 0 (outcomes that are not non-negative
  /// integers are left out), a garbled state as `.off`, an empty warning as none; keys it does not know are
  /// ignored.
  init(metaRows rows: [String: String]) {
    self.init()
    for (key, value) in rows where key.hasPrefix(Self.keyPrefix) {
      let rest = key.dropFirst(Self.keyPrefix.count)
      switch rest {
      case "messages": counters.messages = StatusText.count(value)
      case "notifications": counters.notifications = StatusText.count(value)
      case _ where rest.hasPrefix("forward."):
        let parts = rest.split(separator: ".")
        if parts.count == 3, let kind = ForwardKind(rawValue: String(parts[1])),
          let outcome = ForwardOutcomeKind(rawValue: String(parts[2]))
        {
          counters[forward: kind, outcome] = StatusText.count(value)
        }
      case _ where rest.hasPrefix("subscriptions."):
        if let kind = SubscriptionKind(rawValue: String(rest.dropFirst("subscriptions.".count))) {
          counters.subscriptions[kind] = StatusText.count(value)
        }
      default:
        let parts = rest.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let platform = DevicePlatform(rawValue: String(parts[0])) else { continue }
        let name = String(parts[1])
        switch name {
        case "state": states[platform] = PushProviderState(published: value)
        case "warning": if !value.isEmpty { warnings[platform] = value }
        case "tokensDeleted": counters[platform].tokensDeleted = StatusText.count(value)
        default:
          guard !name.isEmpty, !name.contains("."), !Self.providerFields.contains(name),
            let count = Int(value), count >= 0
          else { continue }
          counters[platform].outcomes[name] = count
        }
      }
    }
  }
}

extension PushCounters {
  /// Every counter as a meta row: the outcomes each provider present has, its `tokensDeleted`, and the
  /// message and notification totals.
  var metaRows: [(key: String, value: String)] {
    var rows: [(key: String, value: String)] = []
    for platform in DevicePlatform.allCases {
      guard let provider = providers[platform] else { continue }
      for (name, count) in provider.outcomes.sorted(by: { $0.key < $1.key }) {
        rows.append((PushStatus.counterKey(platform, name), String(count)))
      }
      rows.append((PushStatus.counterKey(platform, "tokensDeleted"), String(provider.tokensDeleted)))
    }
    rows.append((PushStatus.keyPrefix + "messages", String(messages)))
    rows.append((PushStatus.keyPrefix + "notifications", String(notifications)))
    for kind in SubscriptionKind.allCases {
      if let count = subscriptions[kind] { rows.append((PushStatus.subscriptionKey(kind), String(count))) }
    }
    for kind in ForwardKind.allCases {
      for outcome in ForwardOutcomeKind.allCases {
        if let count = forwards[kind]?[outcome] {
          rows.append((PushStatus.keyPrefix + "forward.\(kind.rawValue).\(outcome.rawValue)", String(count)))
        }
      }
    }
    return rows
  }
}

// MARK: Maintenance

/// The store's own maintenance totals, since the database was created (`maintenance.*` rows, kept by
/// `Database.pruneStations(now:expiryMs:)`).
public struct MaintenanceStatus: Sendable, Equatable {
  /// Stations deleted because they were not heard within the expiry.
  public var stationsPruned = 0
  /// Push tokens deleted because they were not refreshed within the expiry.
  public var devicesPruned = 0
  /// When pruning last ran, epoch ms; nil if it never did.
  public var lastPruneAt: Int64?

  /// Nothing pruned yet.
  public init() {}
}

extension MaintenanceStatus {
  /// Every key of the record starts with this.
  static let keyPrefix = "maintenance."

  /// Decodes the `maintenance.*` rows (by key); a missing or garbled value reads as 0 (nil).
  init(metaRows rows: [String: String]) {
    self.init()
    stationsPruned = StatusText.count(rows[Database.MaintenanceKey.stationsPruned])
    devicesPruned = StatusText.count(rows[Database.MaintenanceKey.devicesPruned])
    lastPruneAt = StatusText.time(rows[Database.MaintenanceKey.lastPruneAt])
  }
}

extension Database {
  /// The meta keys of the store's own maintenance counters (totals since the database was created).
  enum MaintenanceKey {
    /// Stations deleted by `pruneStations` because they were not heard within the expiry.
    static let stationsPruned = MaintenanceStatus.keyPrefix + "stationsPruned"
    /// Push tokens deleted by `pruneStations` because they were not refreshed within the expiry.
    static let devicesPruned = MaintenanceStatus.keyPrefix + "devicesPruned"
    /// When `pruneStations` last ran, epoch ms.
    static let lastPruneAt = MaintenanceStatus.keyPrefix + "lastPruneAt"
  }
}

// MARK: Field decoding

/// How the records read their text fields.
enum StatusText {
  /// A non-negative integer; 0 for anything else.
  static func count(_ text: String?) -> Int {
    guard let text, let value = Int(text), value >= 0 else { return 0 }
    return value
  }

  /// An epoch-ms time; nil when missing or not an integer.
  static func time(_ text: String?) -> Int64? {
    text.flatMap { Int64($0) }
  }

  /// A non-negative finite decimal; 0 for anything else.
  static func rate(_ text: String?) -> Double {
    guard let text, let value = Double(text), value.isFinite, value >= 0 else { return 0 }
    return value
  }

  /// Station addresses separated by single spaces; none for nil or empty text.
  static func calls(_ text: String?) -> [String] {
    guard let text else { return [] }
    return text.split(separator: " ").map(String.init)
  }
}
