/// Where a forward target delivers (docs/api.md "Forwarding"; `forward_targets.kind`).
public enum ForwardKind: String, Sendable, CaseIterable {
  /// One mail per message through the operator's SMTP server (`[forward.email]`), after the address is confirmed.
  case email
  /// A POST to an ntfy topic URL with its `Title`, `Tags` and `Priority` headers.
  case ntfy
  /// A JSON POST signed with HMAC-SHA256 over the timestamp and the raw body.
  case webhook
}

/// Whether a forward target gets messages (`status` in the settings answer).
public enum ForwardStatus: Sendable, Equatable {
  /// Messages are forwarded.
  case active
  /// An email address that has not entered its confirmation code yet: it gets only confirmation mails.
  case unconfirmed
  /// Messages are still forwarded, but the last ones failed for a passing reason (a full mailbox, an SMTP 4xx, an
  /// HTTP redirect, a 5xx, a 429, no answer) and are retried with the growing backoff; `reason` is what the service
  /// answered, `since` (epoch ms) when the failures began. The next delivery makes the target active again (stored
  /// as `active` with `failing_since`, `sql/023_forward_failing.sql`).
  case failing(reason: String, since: Int64)
  /// Given up for good: the endpoint answered 404 or 410, ntfy refused the token (401, 403), the SMTP server refused
  /// the address for good (550, 551, 553, 5.1.x), or the host is at a private address. `at` is epoch ms. It stays
  /// until the owner removes or replaces the target.
  case disabled(reason: String, at: Int64)

  /// `active`, `unconfirmed`, `failing` or `disabled`, as answered.
  public var name: String {
    switch self {
    case .active: "active"
    case .unconfirmed: "unconfirmed"
    case .failing: "failing"
    case .disabled: "disabled"
    }
  }

  /// The `forward_targets.status` it is stored as (a failing target is `active` with `failing_since`).
  public var storedName: String {
    if case .failing = self { return "active" }
    return name
  }

  /// Whether messages are forwarded to it (`active` or `failing`).
  public var forwards: Bool {
    switch self {
    case .active, .failing: true
    case .unconfirmed, .disabled: false
    }
  }

  /// The reason of a failing or disabled target, nil otherwise.
  public var reason: String? {
    switch self {
    case .failing(let reason, _), .disabled(let reason, _): reason
    case .active, .unconfirmed: nil
    }
  }
}

/// The class of a failing or disabled target's reason (`reasonCode` in the settings answer, `reason` of
/// `aprs_cloud_forward_targets`, `forward_targets.reason_code`): the row of the channel's table of answers (docs/api.md
/// "Forwarding (email, ntfy, webhooks)") that the service's answer fell in.
public enum ForwardProblem: String, Sendable, CaseIterable {
  /// ntfy refused the access token, or publishing without one (401, 403): disabled.
  case authRefused = "auth_refused"
  /// The endpoint answered 404 or 410: disabled.
  case gone
  /// The SMTP server refused the address for good (550, 551, 553, enhanced 5.1.x): disabled.
  case addressRefused = "address_refused"
  /// The target's host is at a loopback or private address: disabled.
  case privateAddress = "private_address"
  /// The endpoint answered a redirect (3xx), which is never followed: failing.
  case redirect
  /// The service asked to wait (429): failing until its back-off is over.
  case throttled
  /// The mailbox is full (552, enhanced x.2.2): failing until it takes mail again.
  case mailboxFull = "mailbox_full"
  /// The mail was put off for another passing reason (another 4xx, enhanced 5.2.x, 5.3.x, 5.4.x, 5.7.x): failing.
  case mailDeferred = "mail_deferred"
  /// The operator's own mail server did not take the mail (no answer, the login, the sender, TLS): failing.
  case mailServer = "mail_server"
  /// The endpoint answered a 5xx: failing.
  case serverError = "server_error"
  /// The endpoint did not answer (timeout, connection refused, TLS): failing.
  case noAnswer = "no_answer"
}

/// One forward target of a station, as stored (`sql/019_forward_targets.sql`).
public struct ForwardTarget: Sendable, Equatable {
  /// Targets one station may have.
  public static let maximumPerStation = 5
  /// Confirmation mails one address gets in 24 hours at most, whatever station (and target) asks.
  public static let confirmationsPerDay = 3
  /// Confirmation mails one station sends in 24 hours at most, to whatever addresses: a script that claims a
  /// station and swaps its targets for strangers' addresses sends few mails through the operator's server.
  public static let confirmationsPerStationPerDay = 10
  /// Confirmation mails to the addresses of one domain in 24 hours at most, whatever stations ask: a catch-all
  /// domain gives one person any number of addresses, each with its own ``confirmationsPerDay``. The big public
  /// providers, where nobody owns the whole domain, are exempt (`MailboxKey.publicProviders`).
  public static let confirmationsPerDomainPerDay = 20
  /// The window they are counted in, ms.
  public static let confirmationWindowMs: Int64 = 86_400_000
  /// Wrong codes after which the code is void (a new confirmation mail is needed).
  public static let maximumWrongCodes = 5
  /// How long a confirmation code is good, ms.
  public static let confirmationLifetimeMs: Int64 = 86_400_000

  /// The station's upper-case address.
  public var station: String
  /// The server's id (`f` + base-36 digits), kept while the target exists.
  public var id: String
  /// Where it delivers.
  public var kind: ForwardKind
  /// The mail address (`email`) or the `https://` URL (`ntfy`, `webhook`).
  public var address: String
  /// The webhook's HMAC key or the ntfy access token; nil for none. Never answered in full (``secretHint``).
  public var secret: String?
  /// ntfy's `Priority`, 1–5 (4, "high", by default); unused by the other kinds.
  public var priority: Int
  /// Forwarded through mute and quiet hours too.
  public var always: Bool
  /// Whether it gets messages.
  public var status: ForwardStatus
  /// A confirmation mail is waiting to be sent.
  public var confirmDue: Bool
  /// The class of a failing or disabled target's reason; nil for the others (and for a target disabled before the
  /// classes were stored).
  public var problem: ForwardProblem?

  /// A target; see the properties.
  public init(
    station: String, id: String, kind: ForwardKind, address: String, secret: String? = nil, priority: Int = 4,
    always: Bool = false, status: ForwardStatus = .active, confirmDue: Bool = false,
    problem: ForwardProblem? = nil
  ) {
    self.station = station
    self.id = id
    self.kind = kind
    self.address = address
    self.secret = secret
    self.priority = priority
    self.always = always
    self.status = status
    self.confirmDue = confirmDue
    self.problem = problem
  }

  /// `…` and the secret's last 4 characters (all of a shorter one is never shown: `…` alone); nil without one.
  public var secretHint: String? {
    guard let secret else { return nil }
    return secret.count > 8 ? "…" + String(secret.suffix(4)) : "…"
  }

  /// The key the push sender tracks deliveries and waits under (beside device tokens): unique per target.
  public var deliveryKey: String { "forward:" + station + "/" + id }
}

/// A forward target as a client asks for it in `POST /v1/settings` `forward`: `id` keeps a target the station has
/// (the other fields, when given, change it: a new `kind`, address or secret makes it a fresh target that must be
/// confirmed again); without `id`, a new one (`kind` and `address` required).
public struct ForwardDraft: Sendable, Equatable {
  public var id: String?
  public var kind: ForwardKind?
  public var address: String?
  public var secret: String?
  public var priority: Int?
  public var always: Bool?

  public init(
    id: String? = nil, kind: ForwardKind? = nil, address: String? = nil, secret: String? = nil,
    priority: Int? = nil, always: Bool? = nil
  ) {
    self.id = id
    self.kind = kind
    self.address = address
    self.secret = secret
    self.priority = priority
    self.always = always
  }
}

/// The result of a confirmation code entered for an email target (`POST /v1/forward/confirm`).
public enum ForwardConfirmation: Sendable, Equatable {
  /// The code was right: the target is active now.
  case confirmed(ForwardTarget)
  /// A wrong code (counted), or none is valid (never sent, expired, or void after too many wrong ones).
  case wrongCode
  /// The station has no target with that id.
  case notFound
  /// The target is not an email target waiting for its code.
  case notPending(ForwardTarget)
}

/// The result of asking for another confirmation mail.
public enum ForwardResend: Sendable, Equatable {
  /// Queued: the push sender mails a new code.
  case queued(ForwardTarget)
  /// A budget had its confirmation mails of 24 hours already: the next may go at `retryAt` (epoch ms).
  case limited(retryAt: Int64, budget: ConfirmationBudget)
  /// The station has no target with that id.
  case notFound
  /// The target is not an email target waiting for its code.
  case notPending(ForwardTarget)
}

/// A target the push sender found dead, to be disabled with the round's bookkeeping.
public struct ForwardDisable: Sendable, Equatable {
  public var station: String
  public var id: String
  public var reason: String
  /// The class of the reason (nil: none recorded).
  public var problem: ForwardProblem?

  public init(station: String, id: String, reason: String, problem: ForwardProblem? = nil) {
    self.station = station
    self.id = id
    self.reason = reason
    self.problem = problem
  }
}

/// A change of an active target's health the push sender found, written with the round's bookkeeping: its forwards
/// began (or go on) failing for a passing reason, or one was delivered again.
public struct ForwardHealth: Sendable, Equatable {
  public var station: String
  public var id: String
  /// The failure (what the service answered, and its class); nil: delivered again, the target is active.
  public var failure: (reason: String, problem: ForwardProblem)?

  public init(station: String, id: String, failure: (reason: String, problem: ForwardProblem)?) {
    self.station = station
    self.id = id
    self.failure = failure
  }

  public static func == (lhs: ForwardHealth, rhs: ForwardHealth) -> Bool {
    lhs.station == rhs.station && lhs.id == rhs.id && lhs.failure?.reason == rhs.failure?.reason
      && lhs.failure?.problem == rhs.failure?.problem
  }
}

/// How many of the stations' targets are in one state (`aprs_cloud_forward_targets{type,status,reason}`).
public struct ForwardTargetCount: Sendable, Equatable {
  public var kind: ForwardKind
  /// `active`, `unconfirmed`, `failing` or `disabled`.
  public var status: String
  /// The class of a failing or disabled target's reason; nil for the others (and unclassified old ones).
  public var problem: ForwardProblem?
  public var count: Int

  public init(kind: ForwardKind, status: String, problem: ForwardProblem?, count: Int) {
    self.kind = kind
    self.status = status
    self.problem = problem
    self.count = count
  }
}

/// The budgets confirmation mails are counted in, each over ``ForwardTarget/confirmationWindowMs``.
public enum ConfirmationBudget: Sendable, Equatable, CaseIterable {
  /// The sending station's (``ForwardTarget/confirmationsPerStationPerDay``).
  case station
  /// The mailbox's, its variants counted as one (``ForwardTarget/confirmationsPerDay``).
  case address
  /// The address's domain's, unless a big public provider's (``ForwardTarget/confirmationsPerDomainPerDay``).
  case domain

  /// The mails the budget allows in 24 hours.
  public var limit: Int {
    switch self {
    case .station: ForwardTarget.confirmationsPerStationPerDay
    case .address: ForwardTarget.confirmationsPerDay
    case .domain: ForwardTarget.confirmationsPerDomainPerDay
    }
  }

  /// What a 429 names: `confirmation mails to this address (at most 3 in 24 hours)`.
  public var description: String {
    let whose =
      switch self {
      case .station: "from this station"
      case .address: "to this address"
      case .domain: "to this address's domain"
      }
    return "confirmation mails \(whose) (at most \(limit) in 24 hours)"
  }
}
