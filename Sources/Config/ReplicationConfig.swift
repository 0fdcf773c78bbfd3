/// `[replication]`: continuous replication of the database with Litestream, off unless `url` is set.
///
/// ```ini
/// [replication]
/// url = s3://my-bucket/aprs-cloud       ; or file:///mnt/backup/aprs-cloud; empty or absent: off
/// endpoint = https://s3.eu-central-003.backblazeb2.com   ; S3-compatible services; absent: AWS
/// region = eu-central-003
/// accessKeyId = 003abc...               ; absent: Litestream reads LITESTREAM_ACCESS_KEY_ID or
/// secretAccessKey = K003...             ; AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY from its environment
/// syncInterval = 1s                     ; how often new WAL frames are shipped
/// litestream = litestream               ; the binary: a name looked up in $PATH, or a path
/// ```
///
/// Litestream (https://litestream.io, 0.5) streams the write-ahead log to the replica about once per
/// `syncInterval` and restores a database from it; `aprs-cloud up` runs it beside the listener,
/// `aprs-cloud replicate` runs it under systemd, and `aprs-cloud restore` brings a database back.
public struct ReplicationConfig: Sendable, Equatable {
  /// Where the replica lives.
  public enum Target: Sendable, Equatable {
    /// A directory on this machine (another disk, a network mount): `file:///PATH`.
    case file(path: String)
    /// An S3-compatible bucket and the path of the replica inside it: `s3://BUCKET/PATH`.
    case s3(bucket: String, path: String)
  }

  /// The replica; nil when replication is off.
  public var target: Target?
  /// `[replication] url` as written, for messages; nil when off.
  public var url: String?
  /// The Litestream executable: a bare name is looked up in `$PATH`, anything with a `/` is a path.
  public var litestream = "litestream"
  /// S3: the endpoint of an S3-compatible service (`https://…`); nil for AWS.
  public var endpoint: String?
  /// S3: the bucket's region; nil lets Litestream find it out.
  public var region: String?
  /// S3: the access key id; nil: Litestream reads it from its environment.
  public var accessKeyId: String?
  /// S3: the secret access key; nil: Litestream reads it from its environment.
  public var secretAccessKey: String?
  /// How often Litestream ships new WAL frames to the replica (ms).
  public var syncIntervalMs: Int64 = 1000

  /// Whether a replica is configured (then Litestream owns the WAL checkpoints).
  public var isEnabled: Bool { target != nil }

  /// The defaults: off.
  public init() {}

  /// Reads and validates `[replication]`.
  public init(_ config: ConfigFile) throws(ConfigError) {
    let section = "replication"
    let defaults = ReplicationConfig()
    if let value = config.value(section, "url"), !value.text.isEmpty {
      guard let target = Self.parseURL(value.text) else {
        throw .invalidValue(
          key: "replication.url", value: value.text, source: value.source.description,
          reason: "expected file:///ABSOLUTE/PATH or s3://BUCKET/PATH")
      }
      self.target = target
      url = value.text
    }
    litestream = try config.string(section, "litestream", default: defaults.litestream)
    if let value = config.value(section, "litestream") {
      if litestream.isEmpty {
        throw .invalidValue(
          key: "replication.litestream", value: value.text, source: value.source.description,
          reason: "expected the Litestream executable's name or path")
      }
      // A path written in the file is relative to the file, like every other path.
      if litestream.contains("/") { litestream = try config.path(section, "litestream") ?? litestream }
    }
    endpoint = try config.string(section, "endpoint").flatMap { $0.isEmpty ? nil : $0 }
    if let endpoint, let value = config.value(section, "endpoint"),
      !(endpoint.hasPrefix("http://") || endpoint.hasPrefix("https://"))
    {
      throw .invalidValue(
        key: "replication.endpoint", value: value.text, source: value.source.description,
        reason: "expected an http:// or https:// URL")
    }
    region = try config.string(section, "region").flatMap { $0.isEmpty ? nil : $0 }
    accessKeyId = try config.string(section, "accessKeyId").flatMap { $0.isEmpty ? nil : $0 }
    secretAccessKey = try config.string(section, "secretAccessKey").flatMap { $0.isEmpty ? nil : $0 }
    syncIntervalMs = try config.duration(
      section, "syncInterval", default: defaults.syncIntervalMs, range: 100...86_400_000)
  }

  /// `file:///PATH` or `s3://BUCKET/PATH` (no `..` in PATH); nil for anything else.
  static func parseURL(_ text: String) -> Target? {
    guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
    if text.hasPrefix("file://") {
      var path = String(text.dropFirst("file://".count))
      while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
      guard path.hasPrefix("/"), path.count > 1, !hasParentStep(path) else { return nil }
      return .file(path: path)
    }
    if text.hasPrefix("s3://") {
      let rest = text.dropFirst("s3://".count)
      guard let slash = rest.firstIndex(of: "/") else { return nil }
      let bucket = String(rest[..<slash])
      var path = String(rest[rest.index(after: slash)...])
      while path.hasSuffix("/") { path.removeLast() }
      let bucketBytes = bucket.utf8
      guard (3...63).contains(bucketBytes.count),
        bucketBytes.allSatisfy({
          ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-")
            || $0 == UInt8(ascii: ".")
        }),
        !path.isEmpty, !path.hasPrefix("/"), !hasParentStep(path)
      else { return nil }
      return .s3(bucket: bucket, path: path)
    }
    return nil
  }

  private static func hasParentStep(_ path: String) -> Bool {
    path.split(separator: "/").contains { $0 == ".." }
  }

  /// The keys this struct reads.
  public static let schema = ConfigSchema(sections: [
    "replication": [
      "url", "litestream", "endpoint", "region", "accessKeyId", "secretAccessKey", "syncInterval",
    ]
  ])
}
