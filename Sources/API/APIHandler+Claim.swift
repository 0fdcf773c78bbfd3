import APRS
import JSON
import Store

extension APIHandler {
  /// `POST /v1/claim` `{callsign, ssid, auth, rotate?, release?, code?, resend?}` (docs/api.md "Owned stations",
  /// docs/design.md "Who may do what"): claims a station (registering it first if needed, under the same
  /// limits as a register) and answers `{"stationKey":"<43 base64url characters>","claimedAt":<ms>,
  /// "claim":"proven"|"provisional"}`, the key once.
  /// - A station nobody uses is claimed first-come: `proven`.
  /// - A station in use (``Store/Database/stationInUse(_:now:expiryMs:)``) is claimed `provisional`, and so is a
  ///   claim that would take a claimed station back from a provisional, unproven or younger claim: a code goes to
  ///   each of the station's devices registered before that claim (`codeDevices` says how many), and the claimant
  ///   proves with `{code}` and its key. A claim no device can prove (a proven claim with no older device) is a 409.
  /// - `{code}` with the key proves the claim; `{resend:true}` asks for new codes; `{rotate:true}` with the key of a
  ///   governing claim answers a new key (the old one stops working at once) and the original `claimedAt`.
  /// Claims, proofs and rotations go to the station's audit trail under `client`.
  func claim(
    _ body: RequestBody, station: StationAddress, key: StationKey?, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let address = station.description
    let rotate = try body.bool("rotate") ?? false
    let release = try body.bool("release") ?? false
    let resend = try body.bool("resend") ?? false
    let code = try body.string("code", maxLength: 32)
    let sameKey = try body.bool("sameKey") ?? false
    let actions = [rotate, release, resend, code != nil, sameKey].filter { $0 }.count
    guard actions <= 1 else {
      throw .badRequest("rotate, release, resend, code and sameKey cannot go together")
    }
    if release { return try releaseOwnClaim(station: station, key: key, client: client, now: now) }
    if let code { return try proveClaim(code, station: station, key: key, client: client, now: now) }
    if resend { return try resendClaimCodes(station: station, key: key, client: client, now: now) }
    let newKey = try sameKey ? siblingKey(key, station: station) : StationKey.generate()
    if rotate {
      let (_, access) = try stationAccess(address, key: key)
      try access.requireOwner(address, for: "rotating the station key")
      guard case .owner(let claim) = access else { throw .internalError("the claim vanished") }
      try admitClaim(from: client, now: now)
      let rotated = try store { () throws(StoreError) in
        try database.rotateStationKey(
          address, from: claim.keyHash, to: newKey.hash, client: client.key, now: now)
      }
      guard rotated else { throw .conflict("the claim of \(address) changed meanwhile; try again") }
      return Self.claimAnswer(key: newKey, claimedAt: claim.claimedAt, proof: .proven, station: address)
    }
    // A claim proves the passcode: a key (of a claim that lapsed) stands in for nothing here.
    guard body.contains("auth") else { throw .unauthorized }
    let state = try store { () throws(StoreError) in try database.stationClaim(address) }
    if let claim = state.claim {
      // A key of the owner's is no proof against a claim already here: sameKey claims only an unclaimed SSID.
      if sameKey { throw Self.alreadyClaimed(address, since: claim.claimedAt) }
      return try requestTakeBack(claim, station: address, key: newKey, client: client, now: now)
    }
    let inUse = try store { () throws(StoreError) in
      try database.stationInUse(address, now: now, expiryMs: config.stationExpiryMs)
    }
    try admitClaim(from: client, now: now)
    // Registers the station when it is not stored yet, through a register's limits and caps.
    _ = try refresh(
      station, device: DeviceFields(platform: nil, pushToken: nil), ackMessages: nil, isRegistration: true,
      avatar: .none, access: .unclaimed, client: client, now: now)
    let outcome = try store { () throws(StoreError) -> ClaimOutcome in
      try database.writeBatch { () throws(StoreError) -> ClaimOutcome in
        if inUse, let wait = try admitCodeRound(station: address, client: client, now: now) {
          return .codesLimited(retryAfterMs: wait)
        }
        return try database.claimStation(
          address, keyHash: newKey.hash, proof: inUse ? .provisional : .proven, client: client.key, now: now)
      }
    }
    switch outcome {
    case .claimed(let at, let proof):
      let devices = proof == .provisional ? try codeRecipients(address, before: now, now: now) : nil
      return Self.claimAnswer(
        key: newKey, claimedAt: at, proof: proof, station: address, codeDevices: devices)
    case .alreadyClaimed: throw Self.alreadyClaimed(address, since: nil)
    case .unregistered: throw .conflict("\(address) was unregistered meanwhile; claim it again")
    case .codesLimited(let retryAfterMs): throw Self.codesLimited(address, retryAfterMs: retryAfterMs)
    }
  }

  /// The key a claim with `sameKey` keeps: the presented `key`, which must be the key of a governing claim of
  /// another SSID of the same call here (the owner's; docs/design.md "ACKs in the name of another SSID"), else
  /// 400 (no key) or 403.
  private func siblingKey(_ key: StationKey?, station: StationAddress) throws(APIError) -> StationKey {
    guard let key else {
      throw .badRequest(
        "sameKey needs the station key of another SSID of \(station.base) (Authorization: Bearer <stationKey> or a"
          + " stationKey field)")
    }
    let owns = try store { () throws(StoreError) in
      try database.ownsSSID(base: station.base, keyHash: key.hash)
    }
    guard owns else {
      throw .forbidden(
        "sameKey: this key claims no other SSID of \(station.base) here (or that claim is provisional); claim"
          + " \(station.description) without sameKey for a key of its own")
    }
    return key
  }

  /// A claim of the claimed station `address`: a request to take it back when some device older than `claim`'s
  /// seniority can prove it (and `claim` is not the operator's approval), else the 409.
  private func requestTakeBack(
    _ claim: StationClaim, station address: String, key: StationKey, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let older = try codeRecipients(address, before: claim.seniority, now: now)
    guard older > 0 else { throw Self.alreadyClaimed(address, since: claim.claimedAt) }
    try admitClaim(from: client, now: now)
    let request = ClaimRequest(
      station: address, keyHash: key.hash, requestedAt: now, seniority: claim.seniority, client: client.key)
    // How long until a round of codes fits, or 0 when the station takes no more requests waiting for codes.
    let wait = try store { () throws(StoreError) -> Int64? in
      try database.writeBatch { () throws(StoreError) -> Int64? in
        if let wait = try admitCodeRound(station: address, client: client, now: now) { return wait }
        return try database.requestClaim(request) ? nil : 0
      }
    }
    switch wait {
    case nil: break
    case 0:
      throw .rateLimited(
        what:
          "claims of \(address) waiting for their codes (at most \(ClaimRequest.pendingPerStation) at once)",
        retryAfterSeconds: Self.seconds(ClaimRequest.codeLifetimeMs))
    case let retryAfterMs?: throw Self.codesLimited(address, retryAfterMs: retryAfterMs)
    }
    return Self.claimAnswer(
      key: key, claimedAt: now, proof: .provisional, station: address, codeDevices: older)
  }

  /// Counts one round of codes pushed to `station`'s devices for `client` (``Store/ClaimRequest/roundsPerStationPerDay``
  /// and ``Store/ClaimRequest/roundsPerClientPerDay``), inside the caller's transaction: nil when it fits, else how
  /// long until it would, ms (``codesLimited(_:retryAfterMs:)`` says it).
  private func admitCodeRound(station: String, client: ClientAddress, now: Int64) throws(StoreError) -> Int64?
  {
    let refusals = try database.consumeRates(
      [
        RateCount(key: RateKey.claimCodeRounds + station, limit: ClaimRequest.roundsPerStationPerDay),
        RateCount(
          key: RateKey.claimCodeRoundsFrom + station + " from:" + client.key,
          limit: ClaimRequest.roundsPerClientPerDay),
      ], windowMs: ClaimRequest.roundWindowMs, now: now)
    guard !refusals.isEmpty else { return nil }
    return refusals.map(\.retryAfterMs).max() ?? ClaimRequest.roundWindowMs
  }

  /// The 429 of a claim (or, `resend`, of a request for new codes) past the station's or the client's rounds of
  /// codes.
  private static func codesLimited(_ address: String, retryAfterMs: Int64, resend: Bool = false) -> APIError {
    .rateLimited(
      what: resend
        ? "codes pushed to \(address)'s devices" : "claims of \(address) (codes pushed to its devices)",
      retryAfterSeconds: seconds(retryAfterMs))
  }

  /// How many of `address`'s devices a round of codes would reach: push devices registered before `seniority`
  /// and refreshed within the station expiry.
  private func codeRecipients(_ address: String, before seniority: Int64, now: Int64) throws(APIError) -> Int
  {
    try store { () throws(StoreError) in
      try database.claimCodeRecipients(
        address, before: seniority, refreshedSince: now - config.stationExpiryMs
      ).count
    }
  }

  /// `{code}` with the key of a claim waiting for its proof: the code pushed to one of the station's devices makes
  /// the claim proven (taking the station back from another claim, if it was one). Answers
  /// `{"claim":"proven","claimedAt":…}` (and `"replaced":true` when it took the station back).
  /// - Throws: 400 for a code that is not 6 digits; 409 when this key's claim waits for no code (or is proven
  ///   already, answered as proven); 403 for a wrong or expired code (the count of tries left).
  private func proveClaim(
    _ entered: String, station: StationAddress, key: StationKey?, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let address = station.description
    guard let key else { throw .badRequest("code: proving a claim needs the stationKey its claim answered") }
    let digits = ClaimCodeCheck.digits(of: entered)
    guard let digits else {
      throw .badRequest("code: a claim code is the 6 digits pushed to the station's devices")
    }
    let (_, access) = try stationAccess(address, key: key)
    if case .owner(let claim) = access {
      return Self.claimAnswer(key: nil, claimedAt: claim.claimedAt, proof: .proven, station: address)
    }
    let request = try store { () throws(StoreError) in try database.claimRequest(address, keyHash: key.hash) }
    guard let request else {
      throw .conflict("no claim of \(address) waits for a code with this key; claim it again")
    }
    guard let expiresAt = request.codesExpireAt, !request.codesDue else {
      throw .conflict(
        "the codes of this claim are on their way to the station's devices; try again in a moment")
    }
    // Each try is taken before the code is compared, so racing guesses are held to the limit too.
    let taken = try store { () throws(StoreError) in
      expiresAt > now ? try database.takeClaimAttempt(address, keyHash: key.hash) : nil
    }
    guard let taken else {
      throw .forbidden(
        "code: the codes of this claim expired or were used up; ask for new ones with resend:true")
    }
    guard let match = taken.codes.first(where: { ClaimCodeCheck.matches(digits, $0) }) else {
      let left = max(0, ClaimRequest.wrongCodesAllowed - taken.attempt)
      if left == 0 {
        try store { () throws(StoreError) in try database.voidClaimCodes(address, keyHash: key.hash) }
      }
      throw .forbidden(
        left > 0
          ? "code: wrong code; \(left) \(left == 1 ? "try" : "tries") left"
          : "code: wrong code; these codes no longer work: ask for new ones with resend:true")
    }
    let outcome = try store { () throws(StoreError) in
      try database.proveClaim(
        address, keyHash: key.hash, token: match.token, seniority: match.registeredAt, client: client.key,
        now: now)
    }
    switch outcome {
    case .gone: throw .conflict("the claim of \(address) changed meanwhile; claim it again")
    case .proven:
      let claimedAt = try store { () throws(StoreError) in try database.stationClaim(address) }.claim?
        .claimedAt
      return Self.claimAnswer(key: nil, claimedAt: claimedAt ?? now, proof: .proven, station: address)
    case .replaced:
      return Self.claimAnswer(key: nil, claimedAt: now, proof: .proven, station: address, replaced: true)
    }
  }

  /// `{resend:true}` with the key of a claim waiting for its proof: another round of codes (at most
  /// ``Store/ClaimRequest/roundsPerRequest`` a claim, and the station's rounds a day). Answers `{"resent":true}`.
  private func resendClaimCodes(
    station: StationAddress, key: StationKey?, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let address = station.description
    guard let key else {
      throw .badRequest("resend: asking for new codes needs the stationKey its claim answered")
    }
    _ = try stationAccess(address, key: key)
    let refusal = try store { () throws(StoreError) -> ResendRefusal? in
      try database.writeBatch { () throws(StoreError) -> ResendRefusal? in
        guard let request = try database.claimRequest(address, keyHash: key.hash) else { return .noRequest }
        guard !request.codesDue, request.codesPushed < ClaimRequest.roundsPerRequest else {
          return .noRoundLeft
        }
        if let wait = try admitCodeRound(station: address, client: client, now: now) {
          return .limited(retryAfterMs: wait)
        }
        return try database.resendClaimCodes(address, keyHash: key.hash) ? nil : .noRoundLeft
      }
    }
    switch refusal {
    case nil: break
    case .noRequest: throw .conflict("no claim of \(address) waits for a code with this key; claim it again")
    case .limited(let retryAfterMs):
      throw Self.codesLimited(address, retryAfterMs: retryAfterMs, resend: true)
    case .noRoundLeft:
      throw .conflict(
        "this claim had its \(ClaimRequest.roundsPerRequest) rounds of codes, or one is on its way; claim again later"
      )
    }
    var writer = JSONWriter(capacity: 24)
    writer.beginObject()
    writer.key("resent")
    writer.bool(true)
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// Why a resend was refused.
  private enum ResendRefusal {
    case noRequest
    case noRoundLeft
    case limited(retryAfterMs: Int64)
  }

  /// The answer of a claim: its key (once, nil after a proof), when it was made, how far it is proven, and for a
  /// provisional claim how many devices its codes go to.
  private static func claimAnswer(
    key: StationKey?, claimedAt: Int64, proof: ClaimProof, station: String, codeDevices: Int? = nil,
    replaced: Bool = false
  ) -> APIResponse {
    var writer = JSONWriter(capacity: 128)
    writer.beginObject()
    if let key {
      writer.key("stationKey")
      writer.string(key.text)
    }
    writer.key("claimedAt")
    writer.int(claimedAt)
    writer.key("claim")
    writer.string(proof == .provisional ? "provisional" : "proven")
    if let codeDevices {
      writer.key("codeDevices")
      writer.int(Int64(codeDevices))
    }
    if replaced {
      writer.key("replaced")
      writer.bool(true)
    }
    writer.endObject()
    return .ok(writer, station: station)
  }

  /// `{release:true}` with the key: the owner gives the claim up (the station, its devices and settings stay;
  /// anyone may claim it again). Answers `{"released":true}`; recorded in the audit trail under `client`. The web
  /// client does this at "Sign out", where it would otherwise lose the only copy of the key.
  private func releaseOwnClaim(
    station: StationAddress, key: StationKey?, client: ClientAddress, now: Int64
  ) throws(APIError) -> APIResponse {
    let address = station.description
    let (state, access) = try stationAccess(address, key: key)
    let released: Bool
    switch access {
    case .provisional(let keyHash) where state.claim?.keyHash != keyHash:
      // A request to take the station back, withdrawn.
      released = try store { () throws(StoreError) in
        try database.withdrawClaimRequest(address, keyHash: keyHash)
      }
    case .provisional, .owner:
      released = try store { () throws(StoreError) in
        try database.releaseClaim(address, client: client.key, now: now)
      }
    default:
      try access.requireOwner(address, for: "releasing the claim")
      released = false
    }
    guard released else { throw .conflict("the claim of \(address) changed meanwhile") }
    var writer = JSONWriter(capacity: 24)
    writer.beginObject()
    writer.key("released")
    writer.bool(true)
    writer.endObject()
    return .ok(writer, station: address)
  }

  /// The 409 of a claim of a claimed station.
  private static func alreadyClaimed(_ address: String, since: Int64?) -> APIError {
    .conflict(
      "\(address) is claimed already\(since.map { " (since \($0) ms)" } ?? ""): only the device holding its"
        + " station key can change it; the server's operator can release the claim")
  }
}
