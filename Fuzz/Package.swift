// swift-tools-version: 6.1
// libFuzzer targets for ferry's parsers, kept out of ferry's own package so that `swift build`
// and `swift test` never need the fuzzer runtime. Build and run them with ../scripts/fuzz.sh;
// each target is an executable built with `-sanitize=fuzzer,address -parse-as-library`.
import PackageDescription

let package = Package(
    name: "ferry-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "ferry", path: "..")],
    targets: [
        .target(name: "CFuzzDriver"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzDriver", .product(name: "FerryCore", package: "ferry")]
        ),
        .executableTarget(
            name: "fuzz-csv",
            dependencies: ["FuzzSupport", .product(name: "FerryFormats", package: "ferry")]
        ),
        .executableTarget(
            name: "fuzz-json",
            dependencies: ["FuzzSupport", .product(name: "FerryFormats", package: "ferry")]
        ),
        .executableTarget(
            name: "fuzz-yaml",
            dependencies: ["FuzzSupport", .product(name: "FerryPipeline", package: "ferry")]
        ),
        .executableTarget(
            name: "fuzz-xml",
            dependencies: ["FuzzSupport", .product(name: "FerryPipeline", package: "ferry")]
        ),
        .executableTarget(
            name: "fuzz-predicate",
            dependencies: ["FuzzSupport", .product(name: "FerryCore", package: "ferry")]
        ),
        .executableTarget(
            name: "fuzz-expression",
            dependencies: ["FuzzSupport", .product(name: "FerryCore", package: "ferry")]
        ),
    ]
)
