import Config
import Testing

@Suite struct ReplicationConfigTests {
  @Test func offByDefaultAndWithAnEmptyURL() throws {
    let none = try ReplicationConfig(ConfigFile())
    #expect(none == ReplicationConfig())
    #expect(!none.isEnabled && none.target == nil && none.url == nil)
    #expect(none.litestream == "litestream")
    #expect(none.syncIntervalMs == 1000)
    let empty = try ReplicationConfig(ConfigFile(parsing: "[replication]\nurl =\n"))
    #expect(!empty.isEnabled)
  }

  @Test func aFileReplica() throws {
    let file = try ConfigFile(
      parsing:
        "[replication]\nurl = file:///mnt/backup/aprs/\nlitestream = bin/litestream\nsyncInterval = 250ms\n",
      name: "/etc/aprs-cloud/aprs-cloud.ini", directory: "/etc/aprs-cloud")
    let config = try ReplicationConfig(file)
    #expect(config.target == .file(path: "/mnt/backup/aprs"))
    #expect(config.url == "file:///mnt/backup/aprs/")
    #expect(config.isEnabled)
    // A path in the file is relative to the file, like every other path; a bare name is looked up in $PATH.
    #expect(config.litestream == "/etc/aprs-cloud/bin/litestream")
    #expect(config.syncIntervalMs == 250)
    #expect(file.warnings(for: .all).isEmpty)
  }

  @Test func anS3ReplicaWithItsSettingsAndTheSecretFromTheEnvironment() throws {
    let file = try ConfigFile(
      parsing: """
        [replication]
        url = s3://my-bucket.example/aprs-cloud/main
        endpoint = https://s3.eu-central-003.backblazeb2.com
        region = eu-central-003
        accessKeyId = 003abc
        secretAccessKey = written-here
        """,
      environment: ["APRS_CLOUD_REPLICATION_SECRETACCESSKEY": "from-the-environment"])
    let config = try ReplicationConfig(file)
    #expect(config.target == .s3(bucket: "my-bucket.example", path: "aprs-cloud/main"))
    #expect(config.endpoint == "https://s3.eu-central-003.backblazeb2.com")
    #expect(config.region == "eu-central-003")
    #expect(config.accessKeyId == "003abc")
    #expect(config.secretAccessKey == "from-the-environment")
    #expect(file.warnings(for: .all).isEmpty)

    let bare = try ReplicationConfig(ConfigFile(parsing: "[replication]\nurl = s3://bucket/db\n"))
    #expect(
      bare.endpoint == nil && bare.region == nil && bare.accessKeyId == nil && bare.secretAccessKey == nil)
  }

  @Test(arguments: [
    "http://example.org/x", "file://relative/path", "file:///", "file:///a/../b", "s3://bucket",
    "s3://bucket/", "s3://Bad_Bucket/x", "s3://ab/x", "s3://bucket/../x", "sftp://host/path", "/just/a/path",
  ])
  func badURLsAreRefusedWithTheKeyNamed(url: String) throws {
    let file = try ConfigFile(parsing: "[replication]\nurl = \(url)\n")
    #expect(throws: ConfigError.self) { try ReplicationConfig(file) }
    do {
      _ = try ReplicationConfig(file)
    } catch {
      #expect(error.description.contains("replication.url"))
      #expect(error.description.contains("file:///ABSOLUTE/PATH or s3://BUCKET/PATH"))
    }
  }

  @Test func otherBadValuesAreRefused() throws {
    for text in [
      "[replication]\nurl = s3://bucket/x\nendpoint = s3.example.org\n",
      "[replication]\nurl = file:///x\nsyncInterval = 10ms\n",
      "[replication]\nurl = file:///x\nsyncInterval = soon\n",
      "[replication]\nurl = file:///x\nlitestream =\n",
    ] {
      #expect(throws: ConfigError.self, "\(text)") { try ReplicationConfig(ConfigFile(parsing: text)) }
    }
  }

  /// The listener reads it too: with replication on, Litestream owns the checkpoints.
  @Test func theListenerKnowsWhetherReplicationIsOn() throws {
    #expect(try ListenerConfig(ConfigFile()).replication.isEnabled == false)
    let on = try ListenerConfig(ConfigFile(parsing: "[replication]\nurl = file:///srv/replica\n"))
    #expect(on.replication.isEnabled)
    #expect(throws: ConfigError.self) {
      try ListenerConfig(ConfigFile(parsing: "[replication]\nurl = nope\n"))
    }
  }
}
