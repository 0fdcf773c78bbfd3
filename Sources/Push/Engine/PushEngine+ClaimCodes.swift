import Store

/// Rounds of claim codes (docs/design.md "Who may do what"): for each claim request that is due, one code per
/// device the station had before the claim, pushed in the banner of a notice and stored only as its salted hash.
extension PushEngine {
  /// Pushes the rounds of codes that are due. Each device gets its own code, so the code entered names the device
  /// that proved the claim (its registration time is the claim's seniority). The hashes are written before any
  /// push goes, so a code that reaches a device can always be checked; a round with no device to reach is recorded
  /// as pushed (the claim then needs the operator).
  func pollClaimCodes(now: Int64) {
    let due: [ClaimRequest]
    do throws(StoreError) {
      due = try database.dueClaimRequests()
    } catch {
      logger.error("claim: cannot read the claim codes due", ["error": error.description])
      return
    }
    for request in due { pushRound(request, now: now) }
  }

  private func pushRound(_ request: ClaimRequest, now: Int64) {
    let fields: [(String, String)] = [("station", request.station), ("client", request.client)]
    let devices: [DeviceRecord]
    let takesBack: Bool
    do throws(StoreError) {
      devices = try database.claimCodeRecipients(
        request.station, before: request.seniority, refreshedSince: now - options.stationExpiryMs
      ).filter { clientReady(for: $0.platform) }
      takesBack = try database.stationClaim(request.station).claim?.keyHash != request.keyHash
    } catch {
      logger.log(
        .error, "claim: cannot read the station's devices", fields: fields + [("error", error.description)])
      return
    }
    let made = devices.map { (device: $0, code: ClaimCodeMaker.make()) }
    let codes = made.map {
      ClaimCode(
        token: $0.device.token, registeredAt: $0.device.registeredAt, salt: $0.code.salt,
        codeHash: $0.code.hash)
    }
    do throws(StoreError) {
      guard
        try database.beginClaimCodes(request, codes: codes, expiresAt: now + ClaimRequest.codeLifetimeMs)
      else { return }
    } catch {
      logger.log(
        .error, "claim: cannot record the claim codes", fields: fields + [("error", error.description)])
      return
    }
    logger.log(
      .info,
      made.isEmpty
        ? "claim: no device of the station can get a code; only the operator can approve the claim"
        : "claim: codes going to the station's devices",
      fields: fields + [("devices", String(made.count))])
    let notice = { (code: String) in
      PushContent(
        station: request.station, fromCall: request.station, seqId: nil, text: "", count: 0,
        kind: .claimCode(
          ClaimNotice(
            code: code, takesBack: takesBack, validMinutes: Int(ClaimRequest.codeLifetimeMs / 60_000))))
    }
    for (device, code) in made {
      enqueueNotice(
        notice(code.digits), .claimCode, to: device, expiresAt: now + ClaimRequest.codeLifetimeMs, now: now)
    }
  }
}
