// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Sesame",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "SesameCore", targets: ["SesameCore"]),
        .library(name: "SesameKeyring", targets: ["SesameKeyring"]),
        .executable(name: "sesame", targets: ["sesame"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "SesameCore",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "SesameKeyring",
            dependencies: ["SesameCore", "CLibSecret"]
        ),
        .executableTarget(
            name: "sesame",
            dependencies: [
                "SesameCore",
                "SesameKeyring",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            resources: []
        ),
        .testTarget(
            name: "SesameCoreTests",
            dependencies: [
                "SesameCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "SesameKeyringTests",
            dependencies: ["SesameKeyring", "SesameCore"]
        ),
    ]
)
