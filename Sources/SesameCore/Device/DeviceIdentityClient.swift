import Crypto
import FoundationEssentials

/// Speaks, for a registered device, the organization's device registration service ([MS-DVRJ])
/// and the broker side of its token endpoint ([MS-OAPXBC]): registration and removal, the nonce,
/// the Primary Refresh Token requested with the device key, renewed and exchanged for any app's
/// tokens with the session key, and the SSO cookie a browser sends. Stateless: the caller keeps
/// the registration, the keys and the PRT. The wire: docs/design/device-identity.md.
public struct DeviceIdentityClient: Sendable {
    public let transport: any HTTPTransport
    /// The sign-in service's root (`https://login.microsoftonline.com`, or the emulator's).
    public let authority: URL
    /// The registration service's root: Microsoft's own host for Microsoft's sign-in service,
    /// else the authority's (the emulator serves both).
    public let registrationService: URL
    public var now: @Sendable () -> Date = { Date() }

    /// The Microsoft Authentication Broker: the client Entra preauthorizes for the registration
    /// service and lets request a PRT (what Microsoft's broker on Linux, macOS and Android uses).
    public static let brokerClientID = "29d9ed98-a469-4536-ade2-f981bc1d605e"
    /// The registration service's resource.
    public static let registrationResource = "urn:ms-drs:enterpriseregistration.windows.net"

    public init(transport: any HTTPTransport, authority: URL) {
        self.transport = transport
        var root = URLComponents(url: authority, resolvingAgainstBaseURL: false) ?? URLComponents()
        root.path = ""
        root.query = nil
        self.authority = root.url ?? authority
        if root.host?.lowercased() == "login.microsoftonline.com" {
            registrationService = URL(string: "https://enterpriseregistration.windows.net")!
        } else {
            registrationService = self.authority
        }
    }

    // MARK: Registration

    /// Registers this device for the user `accessToken` (a token for ``registrationResource``)
    /// belongs to: `JoinType` 4, "Entra registered" (a workplace join).
    public func register(
        accessToken: Secret, tenant: String, keys: some DeviceKeys, displayName: String, osVersion: String
    ) async throws(DeviceIdentityError) -> DeviceRegistration {
        let endpoint = try await registrationEndpoint(tenant: tenant)
        let request: Data
        do {
            request = try keys.certificateRequest(commonName: "7E980AD9-B86D-4306-9425-9AC066FB014A")
        } catch {
            throw DeviceIdentityError(.keysUnreadable, "The device key could not sign its certificate request: \(error)")
        }
        let body: JSONValue = .object([
            "CertificateRequest": .object(["Type": .string("pkcs10"), "Data": .string(request.base64EncodedString())]),
            "TransportKey": .string(keys.transportKeyBlob.base64EncodedString()),
            "TargetDomain": .string(registrationService.host ?? ""),
            "DeviceType": .string("Linux"),
            "OSVersion": .string(osVersion),
            "DeviceDisplayName": .string(displayName),
            "JoinType": .number(4),
            "attributes": .object(["ReuseDevice": .string("true"), "ReturnClientSid": .string("true")]),
        ])
        var url = endpoint
        url.append(queryItems: [URLQueryItem(name: "api-version", value: "2.0")])
        let response = try await exchange(
            HTTPRequest(
                method: "POST", url: url,
                headers: [
                    "Authorization": "Bearer \(accessToken.revealed)", "Content-Type": "application/json", "Accept": "application/json",
                ],
                body: try? JSONEncoder().encode(body)))
        guard response.isSuccess else { throw Self.registrationRefusal(response) }
        guard let answer = try? JSONDecoder().decode(EnrolmentAnswer.self, from: response.body),
            let certificate = Data(base64Encoded: answer.certificate.rawBody), let deviceID = Self.deviceID(ofCertificate: certificate)
        else { throw DeviceIdentityError(.invalidResponse, "The registration service's answer holds no device certificate.") }
        return DeviceRegistration(deviceID: deviceID, certificate: certificate, userPrincipalName: answer.user?.upn, endpoint: endpoint)
    }

    /// Removes the device from the organization (its owner's registration token).
    public func remove(_ registration: DeviceRegistration, accessToken: Secret) async throws(DeviceIdentityError) {
        let response = try await exchange(
            HTTPRequest(
                method: "DELETE", url: registration.endpoint.appending(path: registration.deviceID),
                headers: ["Authorization": "Bearer \(accessToken.revealed)", "Accept": "application/json"]))
        // Already gone there is what was asked.
        guard response.isSuccess || response.status == 404 else { throw Self.registrationRefusal(response) }
    }

    /// Where to enrol, as the service's discovery says.
    func registrationEndpoint(tenant: String) async throws(DeviceIdentityError) -> URL {
        let response = try await exchange(
            HTTPRequest(
                method: "GET", url: registrationService.appending(path: "\(tenant)/Discover"), headers: ["Accept": "application/json"]))
        guard response.isSuccess, let discovery = try? JSONDecoder().decode(Discovery.self, from: response.body),
            let endpoint = URL(string: discovery.service.registrationEndpoint),
            endpoint.scheme == "https" || endpoint.host == authority.host
        else {
            throw DeviceIdentityError(
                .invalidResponse, "The organization's device registration service could not be found (HTTP \(response.status)).")
        }
        return endpoint
    }

    // MARK: The Primary Refresh Token

    /// A nonce for the next signed request (`srv_challenge`).
    public func nonce() async throws(DeviceIdentityError) -> String {
        let response = try await post(["grant_type": "srv_challenge"])
        guard response.isSuccess, let answer = try? JSONDecoder().decode([String: String].self, from: response.body),
            let nonce = answer["Nonce"], !nonce.isEmpty, nonce.utf8.count < 4096
        else { throw Self.refusal(response) }
        return nonce
    }

    /// A PRT for the user whose refresh token (of ``brokerClientID``) is given, bound to this
    /// device: the request signed with the device key, the session key decrypted with the
    /// transport key.
    public func requestPRT(
        refreshToken: Secret, registration: DeviceRegistration, keys: some DeviceKeys
    ) async throws(DeviceIdentityError) -> PrimaryRefreshToken {
        let nonce = try await nonce()
        let header: JSONValue = .object([
            "alg": .string("RS256"), "typ": .string("JWT"), "x5c": .string(registration.certificate.base64EncodedString()),
        ])
        let claims: JSONValue = .object([
            "client_id": .string(Self.brokerClientID), "request_nonce": .string(nonce), "scope": .string("openid aza"),
            "grant_type": .string("refresh_token"), "refresh_token": .string(refreshToken.revealed),
        ])
        let input = Self.segment(header) + "." + Self.segment(claims)
        let signature: Data
        do { signature = try keys.sign(Data(input.utf8)) } catch {
            throw DeviceIdentityError(.keysUnreadable, "The device key could not sign: \(error)")
        }
        let response = try await post([
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "request": input + "." + Base64URL.encode(signature),
            "client_info": "1", "windows_api_version": "2.2",
        ])
        guard response.isSuccess, let answer = try? JSONDecoder().decode(PRTAnswer.self, from: response.body) else {
            throw Self.refusal(response)
        }
        let parts = answer.sessionKeyJWE.split(separator: ".", omittingEmptySubsequences: false)
        let sessionKey: Data?
        do { sessionKey = try Base64URL.decode(String(parts.count == 5 ? parts[1] : "")).map(keys.decrypt) } catch let error
            as DeviceIdentityError
        {
            throw error
        } catch { sessionKey = nil }
        guard let sessionKey, sessionKey.count == 32 else {
            throw DeviceIdentityError(.invalidResponse, "The PRT's session key could not be decrypted with this device's transport key.")
        }
        return PrimaryRefreshToken(
            token: Secret(answer.refreshToken), sessionKey: sessionKey,
            expiresAt: now().addingTimeInterval(TimeInterval(answer.refreshTokenExpiresIn ?? 14 * 86_400)), deviceID: registration.deviceID)
    }

    /// The PRT renewed (`aza`): a new PRT with the same session key.
    public func renew(_ prt: PrimaryRefreshToken) async throws(DeviceIdentityError) -> PrimaryRefreshToken {
        let answer = try await signedExchange(
            prt,
            claims: [
                "client_id": .string(Self.brokerClientID), "scope": .string("openid aza"), "grant_type": .string("refresh_token"),
                "refresh_token": .string(prt.token.revealed), "iss": .string("aad:brokerplugin"),
            ])
        guard let token = answer["refresh_token"]?.stringValue else {
            throw DeviceIdentityError(.invalidResponse, "The renewal's answer holds no PRT.")
        }
        let lifetime = answer["refresh_token_expires_in"]?.integerValue ?? 14 * 86_400
        return prt.renewed(as: Secret(token), expiresAt: now().addingTimeInterval(TimeInterval(lifetime)))
    }

    /// Tokens for any app (`clientID`, `scope`), signed in by the PRT: no page, the device in them.
    public func tokens(
        from prt: PrimaryRefreshToken, clientID: String, scope: String, redirectURI: String? = nil
    ) async throws(DeviceIdentityError) -> TokenResponse {
        var claims: [String: JSONValue] = [
            "client_id": .string(clientID), "scope": .string(scope), "grant_type": .string("refresh_token"),
            "refresh_token": .string(prt.token.revealed), "iss": .string("aad:brokerplugin"), "aud": .string("login.microsoftonline.com"),
            "iat": .string(String(Int(now().timeIntervalSince1970))), "exp": .string(String(Int(now().timeIntervalSince1970) + 300)),
        ]
        if let redirectURI { claims["redirect_uri"] = .string(redirectURI) }
        let answer = try await signedExchange(prt, claims: claims)
        guard let data = try? JSONEncoder().encode(JSONValue.object(answer)),
            let tokens = try? JSONDecoder().decode(TokenResponse.self, from: data)
        else { throw DeviceIdentityError(.invalidResponse, "The answer for \(clientID) holds no tokens.") }
        return tokens
    }

    /// The SSO credential a browser sends (`x-ms-RefreshTokenCredential`) for the sign-in that
    /// handed out `nonce`: HS256 with a key derived from the session key (KDFv2).
    public func ssoCookie(_ prt: PrimaryRefreshToken, nonce: String) -> Secret {
        Secret(
            Self.sessionSigned(
                prt, claims: ["refresh_token": .string(prt.token.revealed), "is_primary": .string("true"), "request_nonce": .string(nonce)])
        )
    }

    // MARK: The wire

    /// A request signed with a key derived from the session key, and its answer decrypted.
    private func signedExchange(
        _ prt: PrimaryRefreshToken, claims: [String: JSONValue]
    ) async throws(DeviceIdentityError) -> [String: JSONValue] {
        var claims = claims
        claims["request_nonce"] = .string(try await nonce())
        let response = try await post([
            "grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "request": Self.sessionSigned(prt, claims: claims),
            "client_info": "1", "windows_api_version": "2.2",
        ])
        guard response.isSuccess else { throw Self.refusal(response) }
        guard let plain = SessionKeyEnvelope.open(response.body, sessionKey: prt.sessionKey),
            case .object(let answer) = try? JSONDecoder().decode(JSONValue.self, from: plain)
        else { throw DeviceIdentityError(.invalidResponse, "The answer could not be decrypted with the PRT's session key.") }
        return answer
    }

    static func sessionSigned(_ prt: PrimaryRefreshToken, claims: [String: JSONValue]) -> String {
        var ctx = [UInt8](repeating: 0, count: 24)
        for index in ctx.indices { ctx[index] = UInt8.random(in: 0...255) }
        let header: JSONValue = .object([
            "alg": .string("HS256"), "ctx": .string(Data(ctx).base64EncodedString()), "kdf_ver": .number(2), "typ": .string("JWT"),
        ])
        let payload = (try? JSONEncoder().encode(JSONValue.object(claims))) ?? Data()
        let input = segment(header) + "." + Base64URL.encode(payload)
        let key = SessionKeyEnvelope.derivedKey(prt.sessionKey, context: Data(SHA256.hash(data: Data(ctx) + payload)))
        return input + "." + Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Data(input.utf8), using: key))
    }

    private static func segment(_ value: JSONValue) -> String { Base64URL.encode((try? JSONEncoder().encode(value)) ?? Data()) }

    private func post(_ form: [String: String]) async throws(DeviceIdentityError) -> HTTPResponse {
        try await exchange(
            HTTPRequest(
                method: "POST", url: authority.appending(path: "common/oauth2/token"),
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
                body: Data(FormEncoding.encode(form.sorted { $0.key < $1.key }).utf8)))
    }

    private func exchange(_ request: HTTPRequest) async throws(DeviceIdentityError) -> HTTPResponse {
        do {
            return try await transport.send(request)
        } catch {
            throw DeviceIdentityError(.network, "\(request.url.host ?? "The service") could not be reached: \(error)")
        }
    }

    /// The token endpoint's refusal as Sesame says it: a removed or disabled device by name.
    static func refusal(_ response: HTTPResponse) -> DeviceIdentityError {
        guard let refusal = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body) else {
            return DeviceIdentityError(
                .invalidResponse, "The sign-in service answered HTTP \(response.status) with a body that is not its error.")
        }
        let code = refusal.errorCodes.first.map { "AADSTS\($0)" }
        switch refusal.errorCodes.first {
        case 700_003?:
            return DeviceIdentityError(.deviceRemoved, "This computer is no longer registered with your organization.", serviceCode: code)
        case 135_011?:
            return DeviceIdentityError(.deviceDisabled, "Your organization has disabled this computer.", serviceCode: code)
        default:
            var error = DeviceIdentityError(
                .refused, "The sign-in service refused this computer's sign-in (\(refusal.error)).", serviceCode: code)
            error.errorDescription = refusal.errorDescription
            return error
        }
    }

    static func registrationRefusal(_ response: HTTPResponse) -> DeviceIdentityError {
        let answer = try? JSONDecoder().decode(RegistrationRefusal.self, from: response.body)
        switch answer?.subcode {
        case "error_device_registration_disabled"?:
            return DeviceIdentityError(
                .registrationRefused, "Your organization does not let its users register computers.", serviceCode: answer?.subcode)
        case "error_device_limit_exceeded"?:
            return DeviceIdentityError(
                .registrationRefused, "You have registered as many devices as your organization allows: remove one in My Account first.",
                serviceCode: answer?.subcode)
        default:
            return DeviceIdentityError(
                .refused, "The device registration service refused (HTTP \(response.status)).", serviceCode: answer?.subcode ?? answer?.code
            )
        }
    }

    /// The device id a certificate names: its subject's common name.
    static func deviceID(ofCertificate der: Data) -> String? {
        DeviceCertificate.commonName(der)
    }

    private struct Discovery: Decodable {
        struct Service: Decodable {
            let registrationEndpoint: String
            enum CodingKeys: String, CodingKey { case registrationEndpoint = "RegistrationEndpoint" }
        }
        let service: Service
        enum CodingKeys: String, CodingKey { case service = "DeviceRegistrationService" }
    }

    private struct EnrolmentAnswer: Decodable {
        struct Certificate: Decodable {
            let rawBody: String
            enum CodingKeys: String, CodingKey { case rawBody = "RawBody" }
        }
        struct User: Decodable {
            let upn: String?
            enum CodingKeys: String, CodingKey { case upn = "Upn" }
        }
        let certificate: Certificate
        let user: User?
        enum CodingKeys: String, CodingKey {
            case certificate = "Certificate"
            case user = "User"
        }
    }

    private struct PRTAnswer: Decodable {
        let refreshToken: String
        /// `refresh_token_expires_in`: seconds, a number or a string.
        let refreshTokenExpiresIn: Int?
        let sessionKeyJWE: String
        enum CodingKeys: String, CodingKey {
            case refreshToken = "refresh_token"
            case refreshTokenExpiresIn = "refresh_token_expires_in"
            case sessionKeyJWE = "session_key_jwe"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            refreshToken = try container.decode(String.self, forKey: .refreshToken)
            sessionKeyJWE = try container.decode(String.self, forKey: .sessionKeyJWE)
            refreshTokenExpiresIn = (try? container.decodeIfPresent(JSONValue.self, forKey: .refreshTokenExpiresIn))?.integerValue
        }
    }

    private struct RegistrationRefusal: Decodable {
        let code: String?
        let subcode: String?
    }
}
