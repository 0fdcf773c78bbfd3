/// The planner's stand-in for real APRS-IS traffic: what share of all messages goes to addressees that
/// start with a given prefix. A prefix entry `P*` lets that share through, so the planner picks the
/// prefixes with the smallest total share.
///
/// The model, without any traffic data (explainable rather than measured):
/// - With probability `1 - otherShare` the addressee is a callsign shaped like most amateur calls:
///   a prefix of one letter (probability ``oneLetterPrefixShare``) or two letters, one digit, a suffix of
///   1, 2 or 3 letters (``suffixLengthShares``), then no SSID (``noSSIDShare``) or `-1` … `-15` (equally
///   likely). Every letter and digit is equally likely. `K1ABC`, `KJ7XYZ-9`, `DL1A-15` are such calls.
/// - With probability ``otherShare`` it is anything else (bulletins, services, tactical and foreign calls
///   like `BLN1`, `WXBOT`, `EMAIL-2`, `2E0ABC`): every next character equally likely among the 37.
///
/// So `K*` carries about 1/26 of the traffic, `K1*` about 1/520, `KJ*` about 1/1352: a digit after the
/// first letter narrows less than a letter does.
public struct AddresseeModel: Sendable {
  /// The share of callsigns with a one-letter prefix (`K1ABC`); the rest have two letters (`KJ7ABC`).
  public var oneLetterPrefixShare: Double
  /// The shares of suffixes of 1, 2 and 3 letters (they sum to 1).
  public var suffixLengthShares: (Double, Double, Double)
  /// The share of addresses without an SSID; the rest have `-1` … `-15`, equally likely.
  public var noSSIDShare: Double
  /// The share of addressees that are not shaped like a callsign.
  public var otherShare: Double

  /// The default: one- and two-letter prefixes and suffix lengths equally likely, SSIDs 0–15 equally
  /// likely, 5 % other addressees.
  public static let callsigns = AddresseeModel(
    oneLetterPrefixShare: 0.5, suffixLengthShares: (1.0 / 3, 1.0 / 3, 1.0 / 3), noSSIDShare: 1.0 / 16,
    otherShare: 0.05)

  public init(
    oneLetterPrefixShare: Double, suffixLengthShares: (Double, Double, Double), noSSIDShare: Double,
    otherShare: Double
  ) {
    self.oneLetterPrefixShare = oneLetterPrefixShare
    self.suffixLengthShares = suffixLengthShares
    self.noSSIDShare = noSSIDShare
    self.otherShare = otherShare
  }

  /// The share (0…1) of messages whose addressee starts with `prefix` (upper case); 1 for the empty
  /// prefix, 0 for characters outside `-0-9A-Z` or more than 9 characters.
  public func share(ofPrefix prefix: String) -> Double {
    let bytes = Array(prefix.utf8)
    guard !bytes.isEmpty else { return 1 }
    guard let key = PackedCall.pack(bytes) else { return 0 }
    return share(key: key, depth: bytes.count)
  }

  /// The share of the first `depth` characters of a packed key.
  func share(key: UInt64, depth: Int) -> Double {
    var callsign = CallsignShape(model: self)
    var other = 1.0
    for index in 0..<depth {
      callsign.consume(Int(PackedCall.code(at: index, of: key)))
      other /= Double(PackedCall.alphabet.count)
    }
    return (1 - otherShare) * callsign.total + otherShare * other
  }
}

/// The callsign part of ``AddresseeModel`` as a small automaton: the probability of being in each state
/// after reading a prefix (the forward algorithm). Its total is the share of callsigns with that prefix.
private struct CallsignShape {
  /// States: 0 start, 1 after the first letter, 2 after a second prefix letter, 3 after the digit, 4–6
  /// after 1–3 suffix letters, 7 after `-`, 8 after `-1` (which may go on to `-10` … `-15`), 9 ended.
  private var mass: [Double] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0]
  private let oneLetter: Double
  /// P(a suffix goes on after 1 letter), P(it goes on after 2 letters).
  private let moreAfterOne: Double
  private let moreAfterTwo: Double
  private let ssid: Double

  init(model: AddresseeModel) {
    let (_, two, three) = model.suffixLengthShares
    oneLetter = model.oneLetterPrefixShare
    moreAfterOne = two + three
    moreAfterTwo = two + three > 0 ? three / (two + three) : 0
    ssid = 1 - model.noSSIDShare
  }

  var total: Double { mass.reduce(0, +) }

  /// Reads one character by its ``PackedCall`` code (1 `-`, 2–11 digits, 12–37 letters).
  mutating func consume(_ code: Int) {
    var next = [Double](repeating: 0, count: 10)
    if code >= 12 {
      let letter = 1.0 / 26
      next[1] = mass[0] * letter
      next[2] = mass[1] * (1 - oneLetter) * letter
      next[4] = mass[3] * letter
      next[5] = mass[4] * moreAfterOne * letter
      next[6] = mass[5] * moreAfterTwo * letter
    } else if code >= 2 {
      let digit = code - 2
      next[3] = mass[1] * oneLetter / 10 + mass[2] / 10
      // After `-`: `1` starts -1 and -10 … -15 (7 of the 15 SSIDs), `2` … `9` end it; after `-1`, one
      // of `0` … `5` ends it (6 of the 7).
      if digit == 1 { next[8] = mass[7] * 7 / 15 }
      if digit >= 2 { next[9] += mass[7] / 15 }
      if digit <= 5 { next[9] += mass[8] / 7 }
    } else if code == 1 {
      next[7] = (mass[4] * (1 - moreAfterOne) + mass[5] * (1 - moreAfterTwo) + mass[6]) * ssid
    }
    mass = next
  }
}
