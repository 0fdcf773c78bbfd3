// swift-tools-version:6.0
import PackageDescription

/// aprs-cloud: APRS-IS to push-notification bridge.
///
/// Layout: one system-library target per C library (`C…`), the platform layer (`Platform`:
/// threads, locks, clocks, signals, base64) and `Logging`, pure Swift cores (`APRS`, `JSON`),
/// the files the processes share beside the database (`CompanionFiles`), the only SQL-speaking module (`Store`),
/// and thin executables.
let package = Package(
  name: "aprs-cloud",
  platforms: [.macOS(.v13)],
  products: [
    .executable(name: "aprs-cloud", targets: ["aprs-cloud"]),
    .executable(name: "aprs-cloud-fcgi", targets: ["aprs-cloud-fcgi"]),
    .executable(name: "aprs-listener", targets: ["aprs-listener"]),
  ],
  targets: [
    // MARK: C libraries from Debian, each a module map plus the thinnest shim.
    .systemLibrary(
      name: "CSQLite", path: "Sources/CSQLite", pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"])]),
    .systemLibrary(
      name: "CFastCGI", path: "Sources/CFastCGI", pkgConfig: "fcgi",
      providers: [.apt(["libfcgi-dev"])]),
    .systemLibrary(
      name: "CCurl", path: "Sources/CCurl", pkgConfig: "libcurl",
      providers: [.apt(["libcurl4-openssl-dev"])]),
    .systemLibrary(
      name: "COpenSSL", path: "Sources/COpenSSL", pkgConfig: "openssl",
      providers: [.apt(["libssl-dev"])]),

    // MARK: Build tooling: sql/*.sql embedded into the Store as Swift string literals.
    .executableTarget(name: "embed-sql", path: "Sources/embed-sql"),
    .plugin(
      name: "EmbedSQLPlugin", capability: .buildTool(), dependencies: ["embed-sql"],
      path: "Sources/EmbedSQLPlugin"),

    // MARK: Platform layer: threads, locks, conditions, clocks, signals, base64 (Glibc only).
    .target(name: "Platform"),
    // MARK: One key=value line per event on standard error.
    .target(name: "Logging", dependencies: ["Platform"]),

    // MARK: Pure cores (no I/O).
    .target(name: "APRS"),
    .target(name: "JSON"),
    .target(name: "Config", dependencies: ["Logging"]),

    // MARK: What the processes share beside the database, without SQL: the two wake sockets, the listener's
    // beacon, the users file, the database file's identity. Named for the code's own word for them
    // (`DatabaseFile.companionPath`: the files that go with a database, named after its real path).
    .target(name: "CompanionFiles", dependencies: ["Platform"]),

    // MARK: The only module that speaks SQL.
    .target(
      name: "Store", dependencies: ["CSQLite", "APRS", "Platform", "CompanionFiles"],
      plugins: ["EmbedSQLPlugin"]),

    // MARK: Pure request handling for the /v1 API (decode, validate, store, encode).
    .target(
      name: "API",
      dependencies: ["APRS", "JSON", "Store", "CompanionFiles", "Config", "Platform", "Logging", "COpenSSL"]),

    // MARK: The FastCGI/CGI transport: listening socket, worker threads, request and answer values.
    .target(name: "FastCGI", dependencies: ["CFastCGI", "Logging", "Platform"]),

    // MARK: The listener's core: APRS-IS connection, filter, storage decisions, ACKs.
    .target(
      name: "Listener", dependencies: ["APRS", "Store", "CompanionFiles", "Config", "Logging", "Platform"]),

    // MARK: Push delivery: payloads, JWTs, FCM and APNs over one curl multi handle.
    .target(
      name: "Push",
      dependencies: ["APRS", "JSON", "Store", "Config", "Logging", "Platform", "CCurl", "COpenSSL"]),

    // MARK: Executables.
    .executableTarget(
      name: "aprs-listener",
      dependencies: ["Listener", "Push", "Config", "Logging", "Platform", "Store", "CompanionFiles", "APRS"],
      // The Swift runtime linked in, not loaded as shared libraries: the daemon runs for months, and the
      // shared runtime's pages cost it about 3 MB of resident memory more.
      linkerSettings: [.unsafeFlags(["-static-stdlib"])]),
    .executableTarget(
      name: "aprs-cloud-fcgi",
      dependencies: ["API", "Config", "Logging", "Platform", "Store", "CompanionFiles", "FastCGI"]),
    .executableTarget(
      name: "aprs-cloud",
      dependencies: [
        "APRS", "JSON", "Store", "CompanionFiles", "Config", "Logging", "Platform", "Push", "API",
      ]),
    .executableTarget(
      name: "aprs-cloud-bench",
      dependencies: ["APRS", "JSON", "Store", "Config", "Logging", "Platform", "Push", "API", "TestSupport"]),

    // MARK: Tests.
    .target(name: "TestSupport", path: "Tests/TestSupport"),
    .testTarget(name: "APRSTests", dependencies: ["APRS", "TestSupport"]),
    .testTarget(name: "JSONTests", dependencies: ["JSON", "TestSupport"]),
    .testTarget(name: "CompanionFilesTests", dependencies: ["CompanionFiles", "Platform", "TestSupport"]),
    .testTarget(
      name: "StoreTests",
      dependencies: ["Store", "CompanionFiles", "APRS", "CSQLite", "Platform", "TestSupport"]),
    .testTarget(name: "PlatformTests", dependencies: ["Platform"]),
    .testTarget(name: "LoggingTests", dependencies: ["Logging"]),
    .testTarget(name: "ConfigTests", dependencies: ["Config", "Logging"]),
    .testTarget(
      name: "FastCGITests",
      dependencies: ["FastCGI", "Logging", "Platform", "TestSupport", "API", "Store", "CompanionFiles"]),
    .testTarget(
      name: "APITests",
      dependencies: ["API", "Store", "CompanionFiles", "JSON", "APRS", "Platform", "TestSupport"]),
    .testTarget(
      name: "ListenerTests", dependencies: ["Listener", "APRS", "Store", "Config", "Logging", "Platform"]),
    .testTarget(
      name: "PushTests",
      dependencies: ["Push", "APRS", "JSON", "Store", "Config", "Logging", "Platform", "TestSupport"]),
    .testTarget(
      name: "CLITests", dependencies: ["APRS", "JSON", "Store", "Config", "aprs-cloud", "TestSupport"]),
    .testTarget(name: "IntegrationTests", dependencies: ["JSON", "TestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)
