// swift-tools-version: 6.1
import PackageDescription

/// One list of settings for every target, as swift-subprocess and sql-kit do.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "ferry",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "FerryCore", targets: ["FerryCore"]),
        .library(name: "FerryPostgres", targets: ["FerryPostgres"]),
        .library(name: "FerryPostgresStore", targets: ["FerryPostgresStore"]),
        .library(name: "FerryFormats", targets: ["FerryFormats"]),
        .library(name: "FerryPipeline", targets: ["FerryPipeline"]),
        .library(name: "FerryCommandLine", targets: ["FerryCommandLine"]),
        .executable(name: "ferry", targets: ["ferry"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        // Diagnostics: one `Logger` per subsystem (`FerryLog`); the CLI bootstraps the handler.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Documentation only: `swift package generate-documentation` builds the DocC catalogs.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Tests only: the independent reference for the differential tests of decimal arithmetic.
        .package(url: "https://github.com/attaswift/BigInt", from: "6.0.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CFerrySQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // libpq, opened with dlopen on first use (so SQLite-only runs do not map it): see shim.h.
        .target(
            name: "CFerryPostgres",
            linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]
        ),
        .target(
            name: "FerryPostgres",
            dependencies: ["CFerryPostgres"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FerryCore",
            dependencies: [
                "CFerrySQLite", "CFerryCompression", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // The PostgreSQL engine: ferry's layout in a PostgreSQL schema, behind FerryCore's seam
        // (registered at start-up with `StoreEngines.register`), over the libpq client.
        .target(
            name: "FerryPostgresStore",
            dependencies: ["FerryCore", "FerryPostgres", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(
            name: "CFerryCompression",
            providers: [
                .apt(["zlib1g-dev", "libzstd-dev", "libbz2-dev", "liblzma-dev"]),
                .brew(["zlib", "zstd", "bzip2", "xz"]),
            ]
        ),
        .target(
            name: "FerryFormats",
            dependencies: [
                "FerryCore", "FerryPostgres", "CFerryCompression", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .systemLibrary(
            name: "CFerryYAML",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        .target(
            name: "FerryPipeline",
            dependencies: [
                "FerryCore", "FerryFormats", "FerryPostgres", "FerryPostgresStore", "CFerryYAML",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FerryCommandLine",
            dependencies: [
                "FerryCore", "FerryFormats", "FerryPipeline", "FerryPostgres", "FerryPostgresStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "ferry",
            dependencies: ["FerryCommandLine"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "FerryTestSupport",
            dependencies: [
                "FerryCore", "FerryPostgresStore", "CFerryCompression", .product(name: "Yams", package: "Yams"),
            ],
            path: "Tests/FerryTestSupport",
            swiftSettings: swiftSettings
        ),
        // Tests only: ferry's command line with the wibosco sample apps' migration policies.
        .executableTarget(
            name: "ferry-test-policies",
            dependencies: ["FerryCommandLine", "FerryCore"],
            path: "Tests/FerryTestPolicies",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryCoreTests",
            dependencies: [
                "FerryCore", "FerryPostgres", "FerryPostgresStore", "FerryTestSupport",
                .product(name: "BigInt", package: "BigInt"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryFormatsTests",
            dependencies: ["FerryFormats", "FerryTestSupport", "CFerryCompression"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryPipelineTests",
            dependencies: [
                "FerryPipeline", "FerryFormats", "FerryCore", "FerryPostgres", "FerryPostgresStore", "FerryTestSupport",
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryPostgresTests",
            dependencies: ["FerryPostgres", "FerryTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "FerryCLITests",
            dependencies: ["FerryTestSupport", "FerryPostgresStore"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
