// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "Sesame",
    platforms: [.macOS(.v14)],
    products: [
        .library(name: "SesameCore", targets: ["SesameCore"]),
        .library(name: "SesameKeyring", targets: ["SesameKeyring"]),
        .executable(name: "sesame", targets: ["sesame"]),
        .executable(name: "sesame-window", targets: ["sesame-window"]),
        .executable(name: "git-credential-sesame", targets: ["git-credential-sesame"]),
        .executable(name: "sesame-service", targets: ["sesame-service"]),
        .library(name: "IdentityEmulator", targets: ["IdentityEmulator"]),
        .executable(name: "identity-emulator", targets: ["identity-emulator"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        // Already in AsyncHTTPClient's graph: its HTTP CONNECT handler lets `sesame doctor` read a
        // server's certificate through the same proxy; the emulator's Date header handler.
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        // The emulator needs neither swift-configuration nor the full-Foundation form decoder.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        // Already in Hummingbird's graph: the emulator's own service group bounds its shutdown.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
    ],
    targets: [
        // The one boundary to the C library's file calls (Posix), and the text and URL helpers
        // FoundationEssentials lacks: below everything of Sesame's, so small programs stay small.
        .target(name: "SesameSystem", dependencies: ["CCloseOnExec"]),
        // Sockets and epoll instances close-on-exec in every Sesame program (why: its .c file).
        .target(name: "CCloseOnExec"),
        .target(
            name: "SesameCore",
            dependencies: [
                "SesameSystem",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .systemLibrary(
            name: "CLibSecret",
            pkgConfig: "libsecret-1",
            providers: [.apt(["libsecret-1-dev"])]
        ),
        .target(
            name: "SesameKeyring",
            dependencies: ["SesameCore", "SesameSystem", "SesameTPM", "CLibSecret"]
        ),
        // The device's keys in the computer's TPM 2.0 (tpm2-tss's ESYS), the third platform
        // module: only its Interop/ folder calls the C target.
        .target(
            name: "CTPM",
            linkerSettings: [
                .linkedLibrary("tss2-esys"), .linkedLibrary("tss2-mu"), .linkedLibrary("tss2-tctildr"), .linkedLibrary("tss2-rc"),
            ]
        ),
        .target(
            name: "SesameTPM",
            dependencies: [
                "SesameCore", "SesameSystem", "CTPM",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // What `sesame` and `sesame-service` share: the options every command takes, the bundled
        // resources, the desktop's HTTP transport. No GTK: the service links it.
        .target(
            name: "SesameCommandLine",
            dependencies: [
                "SesameCore", "SesameSystem", "SesameKeyring", "SesameService", "SesameGIO",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // `sesame`: the command line, and the window's options, parsed before it becomes
        // `sesame-window`. No GTK: `sesame token` runs on every mail sync.
        .executableTarget(
            name: "sesame",
            dependencies: [
                "SesameCommandLine",
                "SesameCore",
                "SesameSystem",
                "SesameKeyring",
                "SesameGIO",
                "SesameService",
                "SesameWindowModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        // The window: the one program that loads GTK and WebKit (`sesame` and `sesame-service`
        // start it).
        .executableTarget(
            name: "sesame-window",
            dependencies: [
                "SesameCommandLine",
                "SesameCore",
                "SesameSystem",
                "SesameKeyring",
                "SesameGIO",
                "SesameService",
                "SesameGtk",
                "SesameSamples",
                "SesameWindowModel",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // The window exports none of its 34,000 symbols: every library it loads (GTK,
            // WebKit, …) then resolves its own symbols without searching them first, which took
            // 10–15 ms of each launch (`make bench`'s sign-in page figure).
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        // The account service and identity broker that D-Bus activation starts: all session long,
        // so without GTK and WebKit; it starts `sesame --service-face` when the user must be asked.
        .executableTarget(
            name: "sesame-service",
            dependencies: [
                "SesameCommandLine", "SesameCore", "SesameSystem", "SesameKeyring", "SesameGIO", "SesameService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        // git's credential helper: a program of its own, so that Sesame asks the user about it.
        // It links neither GTK nor WebKit nor the Core: git's protocol and the D-Bus client only.
        .target(
            name: "SesameGit",
            dependencies: ["SesameSystem"]
        ),
        .executableTarget(
            name: "git-credential-sesame",
            dependencies: ["SesameGit", "SesameGIO", "SesameSystem"],
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        // GLib and GIO: what a program without a window needs (D-Bus, the proxy settings, the
        // network monitor, the default browser, the main-loop bridge, GLib's errors).
        .systemLibrary(
            name: "CGio",
            pkgConfig: "gio-unix-2.0",
            providers: [.apt(["libglib2.0-dev"])]
        ),
        .target(
            name: "SesameGIO",
            dependencies: ["CGio"]
        ),
        // The account service, program access and the broker: D-Bus semantics without GTK, so
        // an idle service stays small.
        .target(
            name: "SesameService",
            dependencies: ["SesameCore", "SesameGIO", "SesameSystem"]
        ),
        .systemLibrary(name: "CLibIntl"),
        // The window's model without GTK: its phases and state, the flow diagram, what Sesame says
        // (messages, refusal notices, the access question's text) and in which language (gettext).
        .target(
            name: "SesameWindowModel",
            dependencies: ["SesameCore", "SesameSystem", "SesameService", "CLibIntl"]
        ),
        // The samples' view models (Directory, Tasks, Me, OpenID) and the model they share.
        .target(
            name: "SesameSamples",
            dependencies: ["SesameCore", "SesameSystem", "SesameService", "SesameWindowModel"]
        ),
        .systemLibrary(
            name: "CGtkWebKit",
            pkgConfig: "webkit2gtk-4.1",
            providers: [.apt(["libwebkit2gtk-4.1-dev", "libgtk-3-dev"])]
        ),
        .target(
            name: "SesameGtk",
            dependencies: ["SesameCore", "SesameSystem", "SesameGIO", "SesameService", "SesameSamples", "SesameWindowModel", "CGtkWebKit"]
        ),
        .target(
            name: "IdentityEmulator",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "identity-emulator",
            dependencies: [
                "IdentityEmulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            // As `sesame`'s: nothing of the program's needs its symbols exported.
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "sesame-tour",
            dependencies: [
                "SesameGtk", "SesameGIO", "SesameService", "SesameSamples", "SesameWindowModel", "SesameSystem", "SesameCore",
                "IdentityEmulator",
            ],
            path: "Demo/sesame-tour"
        ),
        .executableTarget(
            name: "emulator-bench",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            path: "Benchmarks/emulator-bench"
        ),
        .executableTarget(
            name: "sesame-bench",
            dependencies: ["SesameCore", "SesameKeyring", "SesameService", "SesameSamples", "SesameWindowModel", "SesameTestSupport"],
            path: "Benchmarks/sesame-bench"
        ),
        // Test support: what several test targets share. SesameTestSupport knows the emulator
        // (in process and as a process), the one headless browser, the one-time codes, the process
        // runner and the one way to poll (Eventually), and not SesameCore; SesameCoreTestSupport
        // has the Core's fakes.
        .target(
            name: "SesameTestSupport",
            dependencies: [
                "IdentityEmulator",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Tests/SesameTestSupport"
        ),
        .target(
            name: "SesameCoreTestSupport",
            dependencies: [
                "SesameCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/SesameCoreTestSupport"
        ),
        .testTarget(
            name: "SesameCoreTests",
            dependencies: [
                "SesameCore",
                "SesameSystem",
                "SesameCoreTestSupport",
                "SesameTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "SesameSamplesTests",
            dependencies: [
                "SesameSamples", "SesameWindowModel", "SesameService", "SesameGit", "SesameCore", "SesameCoreTestSupport",
                "SesameTestSupport", "SesameCommandLine",
            ],
            exclude: ["Fixtures"]
        ),
        .testTarget(
            name: "SesameKeyringTests",
            dependencies: ["SesameKeyring", "SesameCore"]
        ),
        // GTK: the real WebKit view and window under Xvfb (synchronous XCTest).
        .testTarget(
            name: "SesameGtkTests",
            dependencies: [
                "SesameGtk",
                "SesameGIO",
                "SesameService",
                "SesameSamples",
                "SesameWindowModel",
                "SesameCore",
                "SesameTestSupport",
                "IdentityEmulator",
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // The `sesame` executable's command-line contract.
        .testTarget(
            name: "SesameCLITests",
            dependencies: ["SesameTestSupport"],
            exclude: ["Mail", "Ending"]
        ),
        // Every tutorial flow through the real app, driven from outside (WebDriver, AT-SPI).
        .testTarget(
            name: "SesameAppEndToEndTests",
            dependencies: ["SesameTestSupport", "IdentityEmulator"],
            exclude: ["EndToEnd"]
        ),
        // SesameCore against the emulator over real sockets; MSAL/ holds the MSAL-based tool
        // (msal-extensions) that shares a cache with it.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "SesameCore",
                "SesameService",
                "SesameKeyring",
                "SesameTPM",
                "IdentityEmulator",
                "SesameTestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            exclude: ["MSAL"]
        ),
        // The seeded structured fuzzer over every parser of outside input (`make fuzz`).
        .testTarget(
            name: "FuzzTests",
            dependencies: ["SesameCore", "IdentityEmulator"],
            exclude: ["Corpus"]
        ),
        .testTarget(
            name: "IdentityEmulatorTests",
            dependencies: [
                "IdentityEmulator",
                "SesameTestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            exclude: ["MSAL", "WebAuthnInterop"]
        ),
    ]
)
