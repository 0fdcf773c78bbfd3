/// Calls that are APRS services or generic destinations, not stations: this server never sends a message to one
/// on an owner's behalf (`OutgoingMessage.addresseeProblem`). Pure.
///
/// Each is matched against the whole call without its SSID (`EMAIL-2` is `EMAIL`), never as a prefix: none holds
/// a digit, so no amateur callsign is one of them, while prefixes would catch real calls (`AP2…` is Pakistan,
/// `DX1…` the Philippines).
public enum ServiceCalls {
  /// Gateways out of APRS to other networks, by call, with what they reach. A message to one leaves amateur
  /// radio as mail or a text message in the owner's name, so a relay like this server must not send it.
  ///
  /// Sources: the APRS-IS email page (aprs-is.net "Email Services": `EMAIL`, retired in 2019 and replaced by a
  /// javAPRSSrvr gateway, and `EMAIL-2`, javAPRSSrvr's EmailGate); smsgte.org (`SMSGTE`, with SSID aliases such as
  /// `SMSGTE-01`); `SMS`, the call of other APRS-to-SMS gateways.
  public static let gateways: [String: String] = [
    "EMAIL": "the APRS email gateway",
    "SMSGTE": "the APRS SMS gateway",
    "SMS": "an APRS SMS gateway",
  ]

  /// The generic APRS destination calls: not stations but what a packet is for (`APRS`, `BEACON`, `CQ`, `ID`, …),
  /// read by every station that hears it and acknowledged by none, so a message would only be repeated until it
  /// expires.
  ///
  /// Source: APRS Protocol Reference 1.0.1 (APRS101), chapter 4, "Generic APRS Destination Calls" (`ALL`, `AP`,
  /// `BEACON`, `CQ`, `GPS`, `DF`, `DGPS`, `DRILL`, `DX`, `ID`, `JAVA`, `MAIL`, `MICE`, `QST`, `QTH`, `RTCM`, `SKY`,
  /// `SPACE`, `SPC`, `SYM`, `TEL`, `TEST`, `TLM`, `WX`, `ZIP`, and `AIR`), and `APRS` itself, the generic
  /// destination of APRS packets (`OutgoingMessage.toCall`).
  public static let genericDestinations: Set<String> = [
    "AIR", "ALL", "AP", "APRS", "BEACON", "CQ", "DF", "DGPS", "DRILL", "DX", "GPS", "ID", "JAVA", "MAIL",
    "MICE", "QST", "QTH", "RTCM", "SKY", "SPACE", "SPC", "SYM", "TEL", "TEST", "TLM", "WX", "ZIP",
  ]

  /// Why `addressee` (any case, any SSID) is a service or generic call and gets no message from this server, as a
  /// sentence naming it, or nil when it is neither.
  public static func problem(_ addressee: String) -> String? {
    let upper = addressee.uppercased()
    let base =
      upper.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
      ?? upper
    if let gateway = gateways[base] {
      return "\(addressee) is \(gateway) (\(base)), not a station; this server does not relay messages"
        + " through gateways"
    }
    if genericDestinations.contains(base) {
      return "\(addressee) is a generic APRS destination call (\(base)), not a station; no one acknowledges a"
        + " message to it"
    }
    return nil
  }
}
