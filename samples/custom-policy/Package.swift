// swift-tools-version: 6.1
// Your own ferry: ferry's command line with your migration policies registered.
import PackageDescription

let package = Package(
    name: "custom-policy",
    platforms: [.macOS(.v15)],
    dependencies: [
        // In your project: .package(path: "vendor/ferry") or .package(url: YOUR_FERRY_GIT_URL, branch: "main");
        // ferry has no release tags yet, so a from: version requirement resolves to nothing.
        .package(name: "ferry", path: "../..")
    ],
    targets: [
        .executableTarget(
            name: "shop-ferry",
            dependencies: [
                .product(name: "FerryCore", package: "ferry"),
                .product(name: "FerryCommandLine", package: "ferry"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny"), .enableUpcomingFeature("MemberImportVisibility")]
        )
    ]
)
