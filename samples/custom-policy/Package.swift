// swift-tools-version: 6.1
// Your own ferry: ferry's command line with your migration policies registered.
import PackageDescription

let package = Package(
    name: "custom-policy",
    platforms: [.macOS(.v15)],
    dependencies: [
        // In your project: .package(url: "https://…/ferry.git", from: "0.1.0")
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
