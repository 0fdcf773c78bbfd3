import Platform

/// What a register or heartbeat asks to do with the caller's avatar (docs/protocol.md, "Avatars").
enum AvatarUpdate: Equatable {
  /// No change requested (no `avatarUpdate:true`, or an old app that sends no avatar fields).
  case none
  /// Store this avatar; `hash` is its identity string.
  case set(icon: String?, image: String?, hash: String)
  /// The user cleared the avatar (both fields null).
  case clear
  /// An upload that breaks a limit: not stored, the old hash is echoed, the request still succeeds.
  case rejected(reason: String)

  /// Longest accepted `avatarImage`, in characters of base64.
  static let maxImageCharacters = 24_000
  /// The eight bytes every PNG file starts with.
  static let pngSignature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

  /// Reads the avatar fields of `body`. Wrong JSON types are a 400 like any field, read or not
  /// (docs/protocol.md, "Avatars": `avatarHash`, and the icon and image of a request without
  /// `avatarUpdate:true`, are never used, but a number or an object there is still a 400); a value that
  /// breaks a limit is `.rejected`, so the rest of the request still succeeds.
  init(_ body: RequestBody) throws(APIError) {
    // Any length reads: an over-long value is refused below like any bad avatar (the request's body
    // limit bounds it anyway).
    _ = try body.string("avatarHash", maxLength: .max)
    let icon = try body.string("avatarIcon", maxLength: .max)
    let image = try body.string("avatarImage", maxLength: .max)
    guard try body.bool("avatarUpdate") == true else {
      self = .none
      return
    }
    switch (icon, image) {
    case (nil, nil):
      self = .clear
    default:
      if let reason = Self.violation(icon: icon, image: image) {
        self = .rejected(reason: reason)
      } else {
        self = .set(icon: icon, image: image, hash: Self.hash(icon: icon, image: image))
      }
    }
  }

  /// Why an avatar is refused, or nil when it is within the limits.
  static func violation(icon: String?, image: String?) -> String? {
    if let icon {
      let utf8 = icon.utf8
      let allowed = utf8.allSatisfy { byte in
        (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x5F || byte == 0x2D
      }
      if utf8.isEmpty || utf8.count > 32 || !allowed {
        return "avatarIcon must be 1-32 characters of a-z, 0-9, _ and -"
      }
    }
    if let image {
      if image.utf8.count > maxImageCharacters {
        return "avatarImage is longer than \(maxImageCharacters) characters"
      }
      guard let bytes = Base64.decode(image) else { return "avatarImage is not valid base64" }
      if !bytes.starts(with: pngSignature) { return "avatarImage is not a PNG image" }
    }
    return nil
  }

  /// The avatar's identity string: `icon:<name>` for a built-in icon alone, else the SHA-256 of
  /// `<icon>\n<image>` (an absent icon counts as empty).
  static func hash(icon: String?, image: String?) -> String {
    if let icon, image == nil { return "icon:" + icon }
    return SHA256.hex((icon ?? "") + "\n" + (image ?? ""))
  }
}

extension StationAccess {
  /// `update` as this caller may make it: on a station whose claim governs, a keyless caller's new or cleared
  /// avatar is refused (the rest of the request still succeeds), since the avatar is what every other station's
  /// app shows of the owner.
  func guards(_ update: AvatarUpdate, of station: String) -> AvatarUpdate {
    guard self == .guest else { return update }
    switch update {
    case .set, .clear:
      return .rejected(reason: "\(station) is claimed: changing its avatar needs its station key")
    case .none, .rejected:
      return update
    }
  }
}
