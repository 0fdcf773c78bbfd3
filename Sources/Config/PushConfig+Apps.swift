/// `[apps.<id>]`: the apps besides the default one, each with its own push credentials (issue "several apps":
/// the reading and checking of the sections, not yet read by the programs, which still warn about `[apps.*]` as
/// an unknown section until the push sender and the register use it).
///
/// ```ini
/// [apps.aprsswift]
/// serviceAccountFile = aprsswift-firebase.json   ; its own FCM project
/// ;fcmEndpoint = https://fcm.googleapis.com
/// keyFile = AuthKey_XYZ987WVUT.p8                ; its own APNs key
/// keyId = XYZ987WVUT
/// teamId = ABC123DEFG
/// bundleId = org.example.aprsswift               ; its apns-topic
/// production = true
/// ;apnsEndpoint, productionEndpoint, sandboxEndpoint, caFile as in [messaging.ios.apns]
/// ;maxDevices = 5000                             ; its devices at most (none: no cap of its own)
/// ```
///
/// Each provider of an app is on when its credential keys are set: all of FCM's (`serviceAccountFile`) or all
/// of APNs' (`keyFile`, `keyId`, `teamId`, `bundleId`); some of APNs' but not all is an error naming the first
/// missing one. Web Push and UnifiedPush need no credentials and are shared by every app.
extension PushConfig {
  /// One app's push settings.
  public struct App: Sendable, Equatable {
    /// Its FCM project, nil when it has none.
    public var android: Android?
    /// Its APNs key and topic, nil when it has none.
    public var ios: IOS?
    /// The most devices it may have registered, nil for no cap of its own.
    public var maxDevices: Int?

    public init(android: Android? = nil, ios: IOS? = nil, maxDevices: Int? = nil) {
      self.android = android
      self.ios = ios
      self.maxDevices = maxDevices
    }
  }

  /// The prefix of the apps' sections: `[apps.<id>]`.
  public static let appSectionPrefix = "apps"
  /// The keys an app's section takes.
  public static let appKeys: Set<String> = [
    "serviceAccountFile", "fcmEndpoint", "keyFile", "keyId", "teamId", "bundleId", "production",
    "apnsEndpoint",
    "productionEndpoint", "sandboxEndpoint", "caFile", "maxDevices",
  ]

  /// Reads every `[apps.<id>]`. An id that is not `[a-z0-9-]{1,32}`, the default app's own id (its
  /// credentials are `[messaging.android]` and `[messaging.ios.apns]`), or a section with no credentials at all
  /// is an error naming the section.
  public static func apps(_ config: ConfigFile) throws(ConfigError) -> [AppID: App] {
    var apps: [AppID: App] = [:]
    for section in config.sections(under: appSectionPrefix) {
      let name = section.dropFirst(appSectionPrefix.count + 1)
      guard let id = AppID(name) else {
        throw .invalidValue(
          key: section, value: String(name), source: config.name,
          reason: "an app id is 1 to 32 lower-case letters, digits and -")
      }
      guard id != .htcommander else {
        throw .invalidValue(
          key: section, value: id.rawValue, source: config.name,
          reason:
            "the default app's credentials are [messaging.android] and [messaging.ios.apns]; name another app"
        )
      }
      apps[id] = try app(config, section: section)
    }
    return apps
  }

  private static func app(_ config: ConfigFile, section: String) throws(ConfigError) -> App {
    var app = App()
    if let account = try nonEmptyPath(config, section, "serviceAccountFile") {
      app.android = Android(
        serviceAccountFile: account,
        endpoint: try url(config, section, "fcmEndpoint") ?? fcmEndpoint,
        caFile: try readableFile(config, section, "caFile"))
    }
    let keyFile = try nonEmptyPath(config, section, "keyFile")
    let keyId = try identifier(config, section, "keyId")
    let teamId = try identifier(config, section, "teamId")
    let bundleId = try bundleIdentifier(config, section, "bundleId")
    if keyFile != nil || keyId != nil || teamId != nil || bundleId != nil {
      let because = "\(section) APNs (keyFile, keyId, teamId or bundleId set)"
      guard let keyFile else { throw missing(config, section, "keyFile", because: because) }
      guard let keyId else { throw missing(config, section, "keyId", because: because) }
      guard let teamId else { throw missing(config, section, "teamId", because: because) }
      guard let bundleId else { throw missing(config, section, "bundleId", because: because) }
      app.ios = IOS(
        keyFile: keyFile, keyId: keyId, teamId: teamId, bundleId: bundleId,
        production: try config.bool(section, "production", default: true),
        endpoint: try url(config, section, "apnsEndpoint"),
        productionEndpoint: try url(config, section, "productionEndpoint"),
        sandboxEndpoint: try url(config, section, "sandboxEndpoint"),
        caFile: try readableFile(config, section, "caFile"))
    }
    if config.value(section, "maxDevices") != nil {
      app.maxDevices = try config.int(section, "maxDevices", default: 0, range: 1...10_000_000)
    }
    guard app.android != nil || app.ios != nil else {
      throw .invalidValue(
        key: section, value: "", source: config.name,
        reason: "an app needs its FCM service account (serviceAccountFile) or its APNs key (keyFile, keyId,"
          + " teamId, bundleId)")
    }
    return app
  }
}
