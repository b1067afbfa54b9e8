import Foundation
import SesameTestSupport
import XCTest

/// The emulator's device registration service and Primary Refresh Token, as an implementation
/// nobody here wrote meets them: ROADtools' `roadtx` (pinned, unchanged), which works against the
/// real Entra ID with Microsoft's host names hard-coded. It runs in a network namespace of the
/// test's own where `login.microsoftonline.com` and `enterpriseregistration.windows.net` are the
/// emulator, trusting the emulator's CA through `REQUESTS_CA_BUNDLE` only.
final class DeviceRegistrationProtocolTests: XCTestCase {
    private var network: CompanyNetwork?
    private var directory: URL?

    static let login = "login.microsoftonline.com"
    static let registration = "enterpriseregistration.windows.net"
    static let user = "alex@contoso.onmicrosoft.com"
    static let password = "Passw0rd!"
    static let azureCLI = "04b07795-8ddb-461a-bbee-02f9e1bf7b46"
    static let edge = "ecd6b820-32c2-49b6-98a6-444530e5a77a"

    override func setUp() async throws {
        try XCTSkipUnless(CompanyNetwork.isAvailable, "the namespace needs root and iproute2's ip")
        _ = try Repository.roadtx()
        network = try await CompanyNetwork(
            hostname: Self.login, alsoNamed: [Self.registration], emulatorArguments: ["--device-registration-hostname", Self.registration])
        directory = Repository.temporaryDirectory("roadtx")
    }

    override func tearDown() {
        network?.stop()
        network = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
    }

    /// `roadtx ARGUMENTS` in the namespace, in the test's folder (where it keeps its files).
    @discardableResult
    private func roadtx(
        _ arguments: [String], expecting success: Bool = true, file: StaticString = #filePath, line: UInt = #line
    ) throws
        -> String
    {
        let network = try XCTUnwrap(network)
        let result = try network.run(
            [try Repository.roadtx().path] + arguments,
            environment: ["REQUESTS_CA_BUNDLE": network.caCertificate.path, "HOME": try XCTUnwrap(directory).path, "LANG": "C.UTF-8"],
            in: try XCTUnwrap(directory))
        let output = result.stdout + result.stderr
        if success {
            XCTAssertEqual(result.status, 0, "roadtx \(arguments.first ?? "") failed: \(output)", file: file, line: line)
        }
        return output
    }

    /// The JSON file roadtx wrote in the test's folder.
    private func saved(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: try XCTUnwrap(directory).appending(path: name))
        return try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The claims of the access token roadtx saved last.
    private func savedAccessTokenClaims() throws -> [String: Any] {
        let token = try XCTUnwrap(try saved(".roadtools_auth")["accessToken"] as? String)
        return try JWTClaims.decode(token)
    }

    /// Registers a device named `name` with a DRS token got by password: its id.
    private func register(_ name: String) throws -> String {
        try roadtx(["gettokens", "-u", Self.user, "-p", Self.password, "-r", "drs"])
        let registered = try roadtx(["device", "-a", "register", "-n", name])
        let line = try XCTUnwrap(registered.split(separator: "\n").first { $0.hasPrefix("Device ID: ") }, registered)
        return String(line.dropFirst("Device ID: ".count))
    }

    private func requestPRT(_ name: String) throws {
        try roadtx(["prt", "-a", "request", "-c", "\(name).pem", "-k", "\(name).key", "-u", Self.user, "-p", Self.password])
    }

    /// An HTTP request to the service from inside the namespace (curl): the status, the
    /// `Location` and the body.
    private func send(
        _ method: String, _ path: String, bearer: String? = nil, cookie: String? = nil, body: String? = nil
    ) throws -> (status: Int, location: String?, body: String) {
        let network = try XCTUnwrap(network)
        var command = ["/usr/bin/curl", "-s", "-X", method, "--cacert", network.caCertificate.path, "-D", "-"]
        if let bearer { command += ["-H", "Authorization: Bearer \(bearer)"] }
        if let cookie { command += ["-H", "Cookie: x-ms-RefreshTokenCredential=\(cookie)"] }
        if let body { command += ["-H", "Content-Type: application/json", "--data-binary", body] }
        command.append("https://\(Self.login)/\(path)")
        let result = try network.run(command, environment: [:], in: try XCTUnwrap(directory))
        let parts = result.stdout.components(separatedBy: "\r\n\r\n")
        let (head, content) = (parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
        let lines = head.components(separatedBy: "\r\n")
        let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
        let location = lines.first { $0.lowercased().hasPrefix("location: ") }.map { String($0.dropFirst("location: ".count)) }
        return (status, location, content)
    }

    func testRoadtxRegistersThisComputerAndItsPrimaryRefreshTokenSignsInEveryApp() async throws {
        let deviceID = try register("sesame-test")
        XCTAssertNotNil(UUID(uuidString: deviceID), deviceID)
        let certificate = try String(contentsOf: try XCTUnwrap(directory).appending(path: "sesame-test.pem"), encoding: .utf8)
        XCTAssertTrue(certificate.hasPrefix("-----BEGIN CERTIFICATE-----"), certificate)

        try requestPRT("sesame-test")
        let first = try saved("roadtx.prt")
        let prt = try XCTUnwrap(first["refresh_token"] as? String)
        let sessionKey = try XCTUnwrap(first["session_key"] as? String)
        XCTAssertEqual(first["token_type"] as? String, "pop")
        XCTAssertEqual(sessionKey.count, 64, "a 256-bit session key, decrypted with the device's transport key")

        try roadtx(["prt", "-a", "renew"])
        let renewed = try XCTUnwrap(try saved("roadtx.prt")["refresh_token"] as? String)
        XCTAssertNotEqual(renewed, prt, "renewal issues a new PRT")

        // A token for Azure CLI from the PRT: no password, the device in it.
        try roadtx(["prtauth", "-c", Self.azureCLI, "-r", "https://graph.microsoft.com"])
        let claims = try savedAccessTokenClaims()
        XCTAssertEqual(claims["deviceid"] as? String, deviceID)
        XCTAssertEqual(claims["appid"] as? String, Self.azureCLI)

        // The SSO cookie: /authorize answers it with a code, no page.
        let cookieOutput = try roadtx(["prtcookie"])
        let cookieLine = try XCTUnwrap(cookieOutput.split(separator: "\n").first { $0.hasPrefix("PRT cookie: ") }, cookieOutput)
        let cookie = String(cookieLine.dropFirst("PRT cookie: ".count))
        let answer = try send(
            "GET",
            "common/oauth2/v2.0/authorize?client_id=\(Self.azureCLI)&response_type=code&redirect_uri=http%3A%2F%2Flocalhost%3A8400"
                + "&scope=openid%20profile&state=s1", cookie: cookie)
        XCTAssertEqual(answer.status, 302, "the cookie signs in without a page: \(answer.body)")
        let location = try XCTUnwrap(answer.location)
        XCTAssertTrue(location.hasPrefix("http://localhost:8400/?code="), location)

        // roadtx's own cookie sign-in (the nonce from the URL, the code redeemed).
        try roadtx(["gettokens", "--prt-cookie", cookie, "-s", "https://graph.microsoft.com/.default"])
        XCTAssertEqual(try savedAccessTokenClaims()["deviceid"] as? String, deviceID)

        // What the emulator printed names devices, never a PRT or its key.
        let printed = try XCTUnwrap(network).codes.all.joined(separator: "\n")
        XCTAssertTrue(printed.contains("device-registered \(deviceID)"), printed)
        XCTAssertTrue(printed.contains("prt-issued \(deviceID)"), printed)
        for secret in [prt, renewed, sessionKey, cookie] {
            XCTAssertFalse(printed.contains(secret), "a secret reached the emulator's output")
        }
    }

    func testARegisteredDevicePolicyAdmitsOnlyThePrimaryRefreshTokensSignIns() async throws {
        let policy = { (requirement: String) in
            """
            {"tenants":{"contoso.onmicrosoft.com":{"conditionalAccess":[{"name":"Edge needs a known device","apps":["\(Self.edge)"],"require":"\(requirement)"}]}}}
            """
        }
        var (status, _, body) = try send("POST", ".emulator/policy", body: policy("registeredDevice"))
        XCTAssertEqual(status, 200, body)
        let refused = try roadtx(["gettokens", "-c", Self.edge, "-u", Self.user, "-p", Self.password, "-r", "msgraph"], expecting: false)
        XCTAssertTrue(refused.contains("AADSTS50097"), "a password sign-in shows no device: \(refused)")

        let deviceID = try register("known-device")
        try requestPRT("known-device")
        try roadtx(["prtauth", "-c", Self.edge, "-r", "https://graph.microsoft.com"])
        XCTAssertEqual(try savedAccessTokenClaims()["deviceid"] as? String, deviceID, "the PRT's sign-in shows the device")

        (status, _, body) = try send("POST", ".emulator/policy", body: policy("compliantDevice"))
        XCTAssertEqual(status, 200, body)
        let notCompliant = try roadtx(["prtauth", "-c", Self.edge, "-r", "https://graph.microsoft.com"], expecting: false)
        XCTAssertTrue(notCompliant.contains("AADSTS53000"), "registered is not compliant: \(notCompliant)")
    }

    func testTheTenantsDeviceSettingsDecideWhoRegistersAndHowMany() async throws {
        let discovery = try send("GET", "contoso.onmicrosoft.com/Discover?api-version=1.7")
        XCTAssertTrue(discovery.body.contains("https://\(Self.registration)/EnrollmentServer/device/"), discovery.body)
        let settings = { (allowed: Bool, limit: Int) in
            #"{"tenants":{"contoso.onmicrosoft.com":{"usersMayRegisterDevices":\#(allowed),"maximumDevicesPerUser":\#(limit)}}}"#
        }
        var (status, _, body) = try send("POST", ".emulator/policy", body: settings(false, 50))
        XCTAssertEqual(status, 200, body)
        try roadtx(["gettokens", "-u", Self.user, "-p", Self.password, "-r", "drs"])
        let refused = try roadtx(["device", "-a", "register", "-n", "not-allowed"], expecting: false)
        XCTAssertTrue(refused.contains("error_device_registration_disabled"), refused)

        (status, _, body) = try send("POST", ".emulator/policy", body: settings(true, 1))
        XCTAssertEqual(status, 200, body)
        let joined = try roadtx(["device", "-a", "join", "-n", "company-pc"])
        XCTAssertTrue(joined.contains("Device ID: "), joined)
        let over = try roadtx(["device", "-a", "register", "-n", "one-too-many"], expecting: false)
        XCTAssertTrue(over.contains("error_device_limit_exceeded"), over)

        try roadtx(["gettokens", "-u", Self.user, "-p", Self.password, "-r", "msgraph"])
        let graphToken = try XCTUnwrap(try saved(".roadtools_auth")["accessToken"] as? String)
        (status, _, body) = try send("GET", "v1.0/me/registeredDevices", bearer: graphToken)
        XCTAssertTrue(body.contains(#""trustType":"AzureAd""#), "JoinType 0 is a join: \(body)")
    }

    func testADeviceRemovedInMyAccountOrDisabledLosesItsSignIns() async throws {
        let deviceID = try register("laptop")
        try requestPRT("laptop")
        try roadtx(["gettokens", "-u", Self.user, "-p", Self.password, "-r", "msgraph"])
        let graphToken = try XCTUnwrap(try saved(".roadtools_auth")["accessToken"] as? String)

        var (status, _, body) = try send("GET", "v1.0/me/registeredDevices", bearer: graphToken)
        XCTAssertEqual(status, 200, body)
        let devices = try XCTUnwrap(
            (try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])?["value"] as? [[String: Any]], body)
        let device = try XCTUnwrap(devices.first { $0["deviceId"] as? String == deviceID }, body)
        XCTAssertEqual(device["displayName"] as? String, "laptop")
        XCTAssertEqual(device["trustType"] as? String, "Workplace")
        XCTAssertEqual(device["isCompliant"] as? Bool, false)

        (status, _, body) = try send("POST", ".emulator/devices/\(deviceID)/disable")
        XCTAssertEqual(status, 200, body)
        let disabled = try roadtx(["prtauth", "-c", Self.azureCLI, "-r", "https://graph.microsoft.com"], expecting: false)
        XCTAssertTrue(disabled.contains("AADSTS135011"), disabled)
        (status, _, body) = try send("POST", ".emulator/devices/\(deviceID)/enable")
        XCTAssertEqual(status, 200, body)
        try roadtx(["prtauth", "-c", Self.azureCLI, "-r", "https://graph.microsoft.com"])

        let objectID = try XCTUnwrap(device["id"] as? String)
        (status, _, body) = try send("DELETE", "v1.0/devices/\(objectID)", bearer: graphToken)
        XCTAssertEqual(status, 204, body)
        let removed = try roadtx(["prtauth", "-c", Self.azureCLI, "-r", "https://graph.microsoft.com"], expecting: false)
        XCTAssertTrue(removed.contains("AADSTS700003"), "the PRT of a removed device is refused as Entra does: \(removed)")
    }
}

/// A JWT's claims, read without checking anything (the test looks, the services check).
private enum JWTClaims {
    static func decode(_ token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".")
        guard parts.count == 3 else { throw TestSupportError("not a JWT") }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64), let claims = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw TestSupportError("the JWT's claims are not JSON")
        }
        return claims
    }
}
