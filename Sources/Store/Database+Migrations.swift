/// One schema migration, embedded at build time from `sql/NNN_name.sql`.
struct Migration: Sendable {
  /// The number the file name starts with; also the `user_version` once applied.
  let version: Int
  /// The file name, for messages.
  let name: String
  /// The SQL script.
  let sql: String

  /// The embedded migrations in order. A gap or duplicate in the numbering is a build mistake
  /// that would corrupt every database upgraded with it, so it stops the process at once.
  static let all: [Migration] = embeddedMigrations.enumerated().map { offset, file in
    let digits = file.name.prefix { $0.isASCII && $0.isNumber }
    guard let version = Int(digits), version == offset + 1 else {
      fatalError("sql/\(file.name): migrations must be numbered 001, 002, … without gaps")
    }
    return Migration(version: version, name: file.name, sql: file.sql)
  }
}

extension Database {
  /// The schema version of the newest migration this build carries.
  public static var latestSchemaVersion: Int { Migration.all.count }

  /// The database's schema version (`PRAGMA user_version`; 0 for a new file).
  public func schemaVersion() throws(StoreError) -> Int {
    Int(try scalarText("PRAGMA user_version") ?? "0") ?? 0
  }

  /// Applies every migration the database lacks, in order, and returns the new version.
  /// Running it again is a no-op. A database newer than this build is refused.
  @discardableResult
  public func migrate() throws(StoreError) -> Int {
    try migrate(upTo: Self.latestSchemaVersion)
  }

  /// Applies the missing migrations up to and including `target` (tests use it to build an
  /// old database). Each runs in its own `BEGIN IMMEDIATE` transaction with foreign-key
  /// enforcement off (so a migration may rebuild a table) and a `foreign_key_check` before it
  /// commits; the version is written in the same transaction, so a failure leaves the
  /// database exactly as it was. Safe against another process migrating at the same time.
  @discardableResult
  public func migrate(upTo target: Int) throws(StoreError) -> Int {
    try apply(Migration.all, upTo: target)
  }

  /// `migrate(upTo:)` over an explicit migration list (numbered 1...n), for tests.
  func apply(_ migrations: [Migration], upTo target: Int) throws(StoreError) -> Int {
    let latest = migrations.count
    guard (0...latest).contains(target) else {
      throw .invalidArgument("no migration \(target); this build has 1...\(latest)")
    }
    let found = try schemaVersion()
    guard found <= latest else { throw .schemaTooNew(found: found, supported: latest) }
    let pending = migrations.filter { $0.version > found && $0.version <= target }
    guard !pending.isEmpty else { return found }

    // `PRAGMA foreign_keys` is a no-op inside a transaction, so switch it around them.
    try execute("PRAGMA foreign_keys=OFF")
    defer { try? execute("PRAGMA foreign_keys=ON") }
    for migration in pending {
      try writeTransaction { () throws(StoreError) in
        let current = try schemaVersion()
        if current > latest { throw .schemaTooNew(found: current, supported: latest) }
        if current >= migration.version { return }  // another process got here first
        do throws(StoreError) {
          try execute(migration.sql)
          let violations = try columnTexts("PRAGMA foreign_key_check")
          if !violations.isEmpty {
            let tables = Set(violations).sorted().joined(separator: ", ")
            throw .migrationFailed(name: migration.name, reason: "foreign key check failed in \(tables)")
          }
          try execute("PRAGMA user_version=\(migration.version)")
        } catch {
          if case .sqlite(_, let message) = error {
            throw .migrationFailed(name: migration.name, reason: message)
          }
          throw error
        }
      }
    }
    return try schemaVersion()
  }

  /// Throws unless the database is at exactly this build's schema version: `.schemaTooOld`
  /// when `migrate()` has not been run, `.schemaTooNew` when a newer build wrote it.
  public func checkSchema() throws(StoreError) {
    let found = try schemaVersion()
    let latest = Self.latestSchemaVersion
    if found > latest { throw .schemaTooNew(found: found, supported: latest) }
    if found < latest { throw .schemaTooOld(found: found, required: latest) }
  }
}
