/// `up` with `[replication] url` set: Litestream as one more supervised child.
extension UpPlan {
  /// The Litestream child replicating `database`, or nil when replication is off. Writes the generated
  /// configuration to `DIRECTORY/litestream.yml` (mode 0600: it may hold the S3 secret).
  static func replicationChild(config path: String?, database: String, directory: String) throws(UpError)
    -> UpChild?
  {
    do throws(CommandFailure) {
      let config = try ReplicationSetup.loadConfig(path)
      let replication = try ReplicationSetup.settings(config)
      guard replication.isEnabled else { return nil }
      let litestream = try ReplicationSetup.findLitestream(replication)
      let yaml = ReplicationSetup.litestreamConfig(
        database: database, replication: replication, config: config)
      let file = directory + "/" + LitestreamConfig.fileName
      try ReplicationSetup.writePrivateFile(yaml.yaml, to: file)
      return UpChild(
        name: "litestream", path: litestream, arguments: LitestreamConfig.replicateArguments(configPath: file)
      )
    } catch {
      throw UpError(error.description)
    }
  }
}
