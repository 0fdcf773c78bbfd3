import Config
import Testing

@Suite struct PushConfigTests {
  /// FCM and APNs: Web Push (on by default, WebPushUnitTests) is turned off after `text`.
  func parse(_ text: String, environment: [String: String] = [:]) throws(ConfigError) -> PushConfig {
    try PushConfig(
      try ConfigFile(
        parsing: text + "\n[messaging.webpush]\nenabled = false\n", name: "test.ini", directory: "/etc/aprs",
        environment: environment))
  }

  func error(_ text: String) -> String {
    do {
      _ = try parse(text)
      return "(accepted)"
    } catch {
      return error.description
    }
  }

  @Test func withoutCredentialsPushIsOffWithDefaults() throws {
    let config = try parse("[server]\nworkers = 2\n")
    #expect(config.android == nil && config.ios == nil)
    #expect(config.androidOff == "not configured" && config.iosOff == "not configured")
    #expect(config.coalesceWindowMs == 2000)
    #expect(config.preview)
    #expect(config.maxAgeMs == 3_600_000)
  }

  @Test func everyKeyIsRead() throws {
    let config = try parse(
      """
      [messaging]
      coalesceWindow = 500ms
      preview = false
      maxAge = 10m
      [messaging.android]
      serviceAccountFile = sa.json
      endpoint = https://127.0.0.1:8443/
      caFile = /etc/hostname
      [messaging.ios]
      enabled = yes
      [messaging.ios.apns]
      keyFile = AuthKey_ABC.p8
      keyId = ABC1234567
      teamId = TEAM123456
      bundleId = org.example.htcommander
      production = false
      caFile = /etc/hostname
      """)
    #expect(config.coalesceWindowMs == 500)
    #expect(!config.preview)
    #expect(config.maxAgeMs == 600_000)
    #expect(
      config.android
        == PushConfig.Android(
          serviceAccountFile: "/etc/aprs/sa.json", endpoint: "https://127.0.0.1:8443", caFile: "/etc/hostname"
        ))
    #expect(config.ios?.keyFile == "/etc/aprs/AuthKey_ABC.p8")
    #expect(config.ios?.keyId == "ABC1234567")
    #expect(config.ios?.teamId == "TEAM123456")
    #expect(config.ios?.bundleId == "org.example.htcommander")
    #expect(config.ios?.endpoint == "https://api.sandbox.push.apple.com")
    #expect(config.androidOff == nil && config.iosOff == nil)
  }

  @Test func productionIsTheDefaultHostAndEndpointOverridesIt() throws {
    let apns = "[messaging.ios.apns]\nkeyFile = k.p8\nkeyId = K\nteamId = T\nbundleId = b\n"
    #expect(try parse(apns).ios?.endpoint == "https://api.push.apple.com")
    #expect(try parse(apns + "endpoint = https://localhost:9\n").ios?.endpoint == "https://localhost:9")
    #expect(
      try parse("[messaging.android]\nserviceAccountFile = a.json\n").android?.endpoint
        == "https://fcm.googleapis.com")
  }

  @Test func bothAPNsEnvironmentsHaveAnEndpointAndEndpointOverridesBoth() throws {
    let apns = "[messaging.ios.apns]\nkeyFile = k.p8\nkeyId = K\nteamId = T\nbundleId = b\n"
    let apple = try #require(try parse(apns).ios)
    #expect(apple.productionEndpoint == "https://api.push.apple.com")
    #expect(apple.sandboxEndpoint == "https://api.sandbox.push.apple.com")
    #expect(apple.endpoint(production: false) == "https://api.sandbox.push.apple.com")
    let both = try #require(try parse(apns + "endpoint = https://proxy:9/\nproduction = false\n").ios)
    #expect(both.productionEndpoint == "https://proxy:9" && both.sandboxEndpoint == "https://proxy:9")
    #expect(both.endpoint == "https://proxy:9")
    let split = try #require(
      try parse(
        apns + "endpoint = https://proxy:9\nproductionEndpoint = https://p:1\nsandboxEndpoint = https://s:2\n"
      ).ios)
    #expect(split.productionEndpoint == "https://p:1" && split.sandboxEndpoint == "https://s:2")
    #expect(split.endpoint == "https://p:1", "production picks the first")
    let one = try #require(
      try parse(apns + "endpoint = https://proxy:9\nsandboxEndpoint = https://s:2\n").ios)
    #expect(one.productionEndpoint == "https://proxy:9" && one.sandboxEndpoint == "https://s:2")
    #expect(error(apns + "sandboxEndpoint = http://s\n").contains("messaging.ios.apns.sandboxEndpoint"))
    #expect(error(apns + "productionEndpoint = x\n").contains("messaging.ios.apns.productionEndpoint"))
  }

  @Test func enabledFalseTurnsAConfiguredProviderOff() throws {
    let config = try parse("[messaging.android]\nenabled = false\nserviceAccountFile = a.json\n")
    #expect(config.android == nil)
    #expect(config.androidOff == "disabled")
  }

  @Test func environmentOverridesTheFile() throws {
    let config = try parse(
      "[messaging]\npreview = true\n",
      environment: [
        "APRS_CLOUD_MESSAGING_PREVIEW": "off", "APRS_CLOUD_MESSAGING_ANDROID_SERVICEACCOUNTFILE": "/x.json",
      ])
    #expect(!config.preview)
    #expect(config.android?.serviceAccountFile == "/x.json")
  }

  @Test func badValuesNameTheirKey() {
    #expect(error("[messaging]\ncoalesceWindow = soon\n").contains("messaging.coalesceWindow"))
    #expect(error("[messaging]\ncoalesceWindow = 2m\n").contains("messaging.coalesceWindow"))
    #expect(error("[messaging]\npreview = maybe\n").contains("messaging.preview"))
    #expect(error("[messaging]\nmaxAge = 0\n").contains("messaging.maxAge"))
    #expect(error("[messaging.android]\nenabled = true\n").contains("messaging.android.serviceAccountFile"))
    #expect(
      error("[messaging.android]\nserviceAccountFile = a\nendpoint = http://x\n").contains(
        "messaging.android.endpoint"))
    #expect(
      error("[messaging.android]\nserviceAccountFile = a\ncaFile = /nonexistent/ca.pem\n")
        .contains("messaging.android.caFile"))
    #expect(error("[messaging.ios]\nenabled = on\n").contains("messaging.ios.apns.keyFile"))
    #expect(
      error("[messaging.ios.apns]\nkeyFile = k\nkeyId = K\nteamId = T\n").contains(
        "messaging.ios.apns.bundleId"))
    #expect(error("[messaging.ios.apns]\nkeyId = K 1\n").contains("messaging.ios.apns.keyId"))
    #expect(error("[messaging.ios.apns]\nbundleId = a/b\n").contains("messaging.ios.apns.bundleId"))
    #expect(error("[messaging.ios.apns]\nproduction = sometimes\n").contains("messaging.ios.apns.production"))
  }

  @Test func theSchemaKnowsEveryPushKey() throws {
    let file = try ConfigFile(
      parsing: """
        [messaging]
        coalesceWindow = 1s
        preview = true
        maxAge = 1h
        typo = 1
        [messaging.android]
        enabled = false
        [messaging.ios.apns]
        production = true
        """)
    let warnings = file.warnings(for: ConfigSchema.all)
    #expect(warnings.count == 1)
    #expect(warnings.first?.contains("typo") == true)
  }
}
