import Config
import Testing

/// `[apps.<id>]` (`PushConfig+Apps.swift`): each app's FCM and APNs credentials read and checked as the default
/// app's are, the id's form and the default app's name refused, every error naming its section or key.
@Suite struct AppsConfigTests {
  static let file = "/etc/aprs-cloud/aprs-cloud.ini"

  func apps(_ text: String) throws(ConfigError) -> [AppID: PushConfig.App] {
    try PushConfig.apps(
      try ConfigFile(parsing: text, name: Self.file, directory: "/etc/aprs-cloud", environment: [:]))
  }

  func failure(_ text: String) -> String? {
    do throws(ConfigError) {
      _ = try apps(text)
      return nil
    } catch {
      return "\(error)"
    }
  }

  @Test func eachAppHasItsOwnCredentials() throws {
    let found = try apps(
      """
      [messaging.android]
      serviceAccountFile = default.json

      [apps.aprsswift]
      serviceAccountFile = swift.json
      keyFile = AuthKey_XYZ.p8
      keyId = XYZ987WVUT
      teamId = ABC123DEFG
      bundleId = org.example.aprsswift
      production = false
      maxDevices = 5000

      [apps.beacon-73]
      keyFile = beacon.p8
      keyId = K1
      teamId = T1
      bundleId = org.example.beacon
      apnsEndpoint = https://127.0.0.1:8443/
      """)
    let swiftID = try #require(AppID("aprsswift"))
    let beaconID = try #require(AppID("beacon-73"))
    #expect(found.keys.sorted() == [swiftID, beaconID])
    let swift = try #require(found[swiftID])
    #expect(swift.android?.serviceAccountFile == "/etc/aprs-cloud/swift.json")
    #expect(swift.android?.endpoint == PushConfig.fcmEndpoint)
    #expect(swift.ios?.bundleId == "org.example.aprsswift" && swift.ios?.production == false)
    #expect(swift.maxDevices == 5000)
    let beacon = try #require(found[beaconID])
    #expect(
      beacon.android == nil && beacon.ios?.endpoint == "https://127.0.0.1:8443" && beacon.maxDevices == nil)
    #expect(try apps("[messaging.android]\nserviceAccountFile = a.json\n").isEmpty, "no apps: as today")
  }

  @Test(arguments: [
    ("[apps.APRSSwift]\nserviceAccountFile = a.json\n", "an app id is 1 to 32 lower-case letters"),
    ("[apps.\(String(repeating: "a", count: 33))]\nserviceAccountFile = a.json\n", "an app id is 1 to 32"),
    (
      "[apps.htcommander]\nserviceAccountFile = a.json\n",
      "the default app's credentials are [messaging.android]"
    ),
    ("[apps.empty]\nmaxDevices = 3\n", "an app needs its FCM service account"),
    ("[apps.half]\nkeyFile = k.p8\nkeyId = K1\n", "apps.half.teamId"),
    ("[apps.bad]\nkeyFile = k.p8\nkeyId = K1\nteamId = T1\nbundleId = not a bundle\n", "apps.bad.bundleId"),
    ("[apps.url]\nserviceAccountFile = a.json\nfcmEndpoint = http://insecure\n", "apps.url.fcmEndpoint"),
    ("[apps.cap]\nserviceAccountFile = a.json\nmaxDevices = 0\n", "apps.cap.maxDevices"),
  ])
  func badAppsAreErrorsNamingTheirSectionOrKey(text: String, expected: String) {
    let error = failure(text)
    #expect(error?.contains(expected) == true, "\(error ?? "no error")")
  }

  @Test func anAppIdIsLowerCaseLettersDigitsAndDashes() {
    #expect(AppID("htcommander") == .htcommander)
    #expect(AppID("a") != nil && AppID("aprs-vector-2") != nil)
    for bad in ["", "A", "a_b", "a.b", "a b", String(repeating: "x", count: 33), "é"] {
      #expect(AppID(bad) == nil, "\(bad)")
    }
  }
}
