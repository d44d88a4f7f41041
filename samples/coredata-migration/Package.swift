// swift-tools-version: 6.1
// Your app's own ferry: ferry's command line with the policy your Xcode mapping model names.
import PackageDescription

let package = Package(
    name: "coredata-migration",
    platforms: [.macOS(.v15)],
    dependencies: [
        // In your project: .package(url: "https://…/ferry.git", from: "0.1.0")
        .package(name: "ferry", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "revised-ferry",
            dependencies: [
                .product(name: "FerryCore", package: "ferry"),
                .product(name: "FerryCommandLine", package: "ferry"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        )
    ]
)
