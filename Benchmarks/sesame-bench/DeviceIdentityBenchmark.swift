import Foundation
import SesameCore
import SesameTestSupport

/// `sesame-bench prt-token EMULATOR_URL [ROUNDS]`: alex signs in to the Microsoft Authentication
/// Broker for the device registration service (headless), this "computer" registers with
/// software keys and gets a PRT; then, alternating in each round (ROUNDS, 5, of one second each),
/// as many tokens as the emulator answers for Azure CLI from the PRT (a nonce, then a request
/// signed with the session key: what any new app's first token costs on a registered device)
/// and as many refresh-token redemptions of the broker's own refresh token (what a known app's
/// next token costs). Prints one JSON line: `{"registration_ms": …, "prt": [tokens/s…],
/// "refresh": [tokens/s…]}`.
enum DeviceIdentityBenchmark {
    static let user = "alex@contoso.onmicrosoft.com"
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"

    static func run(base: URL, rounds: Int) async throws {
        let browser = HeadlessBrowser.sockets(base: base, codes: OneTimeCodes())
        let redirect = base.appending(path: "common/oauth2/nativeclient").absoluteString
        let scope = "\(DeviceIdentityClient.registrationResource)/.default openid offline_access"
        let authorize = FormEncoding.url(
            base.appending(path: "organizations/oauth2/v2.0/authorize"),
            appending: [
                ("client_id", DeviceIdentityClient.brokerClientID), ("response_type", "code"), ("redirect_uri", redirect), ("scope", scope),
            ])
        let page = try await browser.signIn(user, authorize: authorize.absoluteString)
        guard let code = page.location.flatMap(URLComponents.init(string:))?.queryItems?.first(where: { $0.name == "code" })?.value else {
            throw BenchError("the broker's sign-in did not come back with a code (\(page.status))")
        }
        let transport = AsyncHTTPClientTransport()
        let tokenURL = base.appending(path: "organizations/oauth2/v2.0/token")
        let redeemed = try await post(
            transport, tokenURL,
            [
                ("client_id", DeviceIdentityClient.brokerClientID), ("grant_type", "authorization_code"), ("code", code),
                ("redirect_uri", redirect), ("scope", scope),
            ])
        guard let access = redeemed["access_token"] as? String, var refresh = redeemed["refresh_token"] as? String else {
            throw BenchError("the broker's code redemption gave no tokens")
        }

        let client = DeviceIdentityClient(transport: transport, authority: base)
        let registering = ContinuousClock.now
        let keys = try await SoftwareDeviceKeys.generate()
        let device = try await client.register(
            accessToken: Secret(access), tenant: "contoso.onmicrosoft.com", keys: keys, displayName: "sesame-bench", osVersion: "bench")
        let prt = try await client.requestPRT(refreshToken: Secret(refresh), registration: device, keys: keys)
        let registration = registering.duration(to: .now) / .milliseconds(1)

        var prtRates: [Double] = []
        var refreshRates: [Double] = []
        for _ in 0..<rounds {
            prtRates.append(
                try await rate {
                    _ = try await client.tokens(from: prt, clientID: azureCLI, scope: "https://graph.microsoft.com/.default")
                })
            refreshRates.append(
                try await rate {
                    let answer = try await post(
                        transport, tokenURL,
                        [
                            ("client_id", DeviceIdentityClient.brokerClientID), ("grant_type", "refresh_token"), ("refresh_token", refresh),
                            ("scope", scope),
                        ])
                    guard answer["access_token"] != nil, let next = answer["refresh_token"] as? String else {
                        throw BenchError("a refresh-token redemption failed")
                    }
                    refresh = next
                })
        }
        let line = try JSONSerialization.data(withJSONObject: ["registration_ms": registration, "prt": prtRates, "refresh": refreshRates])
        print(String(decoding: line, as: UTF8.self))
    }

    /// How many times `body` completes in one second, per second.
    private static func rate(_ body: () async throws -> Void) async throws -> Double {
        let started = ContinuousClock.now
        var count = 0
        while started.duration(to: .now) < .seconds(1) {
            try await body()
            count += 1
        }
        return Double(count) / (started.duration(to: .now) / .seconds(1))
    }

    private static func post(_ transport: AsyncHTTPClientTransport, _ url: URL, _ form: [(String, String)]) async throws -> [String: Any] {
        let body = Data(SesameCore.FormEncoding.encode(form).utf8)
        let headers = SesameCore.HTTPHeaders([("Content-Type", "application/x-www-form-urlencoded")])
        let request = SesameCore.HTTPRequest(method: "POST", url: url, headers: headers, body: body)
        let response = try await transport.send(request)
        return (try JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:]
    }
}
