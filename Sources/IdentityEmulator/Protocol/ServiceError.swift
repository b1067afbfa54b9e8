import FoundationEssentials

/// An error as the identity service reports it: an OAuth `error` plus Entra's `AADSTS` code(s) or
/// B2C's `AADB2C` code and its text. One value renders as a redirect, a token-endpoint JSON body
/// or an error page, each in the service's exact shape.
struct ServiceError: Error, Sendable {
    enum Service: Sendable { case entra, b2c }

    /// `error`: the OAuth error (`invalid_grant`, `access_denied`, …).
    let error: String
    /// `error_codes`: the AADSTS numbers, outermost first (B2C has one).
    let codes: [Int]
    /// The sentence after `AADSTSnnnn: `.
    var message: String
    let service: Service
    /// The HTTP status at the token endpoint.
    var status: Int = 400
    /// `suberror` (e.g. `basic_action`), when Entra sends one.
    var suberror: String?
    /// `claims`: a claims challenge the client sends on its next `/authorize` (a JSON string).
    var claims: String?

    /// `AADSTS54005` or `AADB2C90118`.
    var codeText: String { (service == .entra ? "AADSTS" : "AADB2C") + String(codes.last ?? 0) }

    /// `error_description`: `AADSTSnnnn: text\r\nTrace ID: …\r\nCorrelation ID: …\r\nTimestamp: …`
    /// (B2C leaves out the trace id).
    func description(traceID: String, correlationID: String, at time: Date) -> String {
        let head =
            codes.count > 1
            ? codes.dropLast().map { "AADSTS\($0): " }.joined() + message.replacing("{inner}", with: codeText)
            : "\(codeText): \(message)"
        switch service {
        case .entra:
            return "\(head)\r\nTrace ID: \(traceID)\r\nCorrelation ID: \(correlationID)\r\nTimestamp: \(time.entraTimestamp)"
        case .b2c:
            return "\(head)\r\nCorrelation ID: \(correlationID)\r\nTimestamp: \(time.entraTimestamp)"
        }
    }

    /// `error_uri`: Entra's lookup page for the code.
    var errorURI: String? { service == .entra ? "https://login.microsoftonline.com/error?code=\(codes.last ?? 0)" : nil }

    /// The token endpoint's error body.
    func json(traceID: String, correlationID: String, at time: Date) -> JSON {
        let description = description(traceID: traceID, correlationID: correlationID, at: time)
        switch service {
        case .entra:
            return .members([
                ("error", .string(error)),
                ("error_description", .string(description)),
                ("error_codes", .array(codes.map(JSON.int))),
                ("timestamp", .string(time.entraTimestamp)),
                ("trace_id", .string(traceID)),
                ("correlation_id", .string(correlationID)),
                ("error_uri", errorURI.map(JSON.string)),
                ("suberror", suberror.map(JSON.string)),
                ("claims", claims.map(JSON.string)),
            ])
        case .b2c:
            return .object([("error", .string(error)), ("error_description", .string(description))])
        }
    }

    /// The parameters of an error redirect, `state` last as Entra sends it.
    func redirectFields(state: String?, traceID: String, correlationID: String, at time: Date) -> FormFields {
        var fields = FormFields([
            ("error", error), ("error_description", description(traceID: traceID, correlationID: correlationID, at: time)),
        ])
        if let errorURI { fields.append("error_uri", errorURI) }
        if let state { fields.append("state", state) }
        return fields
    }
}

// MARK: - The catalog (texts as the service writes them)

extension ServiceError {
    static func entra(_ error: String, _ code: Int, _ message: String, status: Int = 400) -> ServiceError {
        ServiceError(error: error, codes: [code], message: message, service: .entra, status: status)
    }

    static func b2c(_ error: String, _ code: Int, _ message: String, status: Int = 400) -> ServiceError {
        ServiceError(error: error, codes: [code], message: message, service: .b2c, status: status)
    }

    // Authorization endpoint

    static let userDeclinedConsent = entra("access_denied", 65004, "User declined to consent to access the app.")
    static let loginRequired = entra("login_required", 50058, "A silent sign-in request was sent but no user is signed in.")

    static func consentRequired(clientID: String, appName: String) -> ServiceError {
        entra(
            "consent_required", 65001,
            "The user or administrator has not consented to use the application with ID '\(clientID)' named '\(appName)'. Send "
                + "an interactive authorization request for this user and resource."
        )
    }

    static func singleTenantAppAtCommon(clientID: String, appName: String) -> ServiceError {
        entra(
            "invalid_request", 50194,
            "Application '\(clientID)'(\(appName)) is not configured as a multi-tenant application. Usage of the /common endpoint "
                + "is not supported for such applications created after '10/15/2018'. Use a tenant-specific endpoint or configure the "
                + "application to be multi-tenant.")
    }

    /// Conditional Access demands MFA for a refresh: the challenge names the policy.
    static func mfaRequired(resource: String) -> ServiceError {
        var error = entra(
            "invalid_grant", 50076,
            "Due to a configuration change made by your administrator, or because you moved to a new location, you must use "
                + "multi-factor authentication to access '\(resource)'.")
        error.suberror = "basic_action"
        error.claims = #"{"access_token":{"capolids":{"essential":true,"values":["8a2f6c1e-3b4d-4e5f-9a8b-7c6d5e4f3a2b"]}}}"#
        return error
    }

    /// The token endpoint is throttling the client (a request loop).
    static func throttled() -> ServiceError {
        entra(
            "temporarily_unavailable", 50196,
            "The server terminated an operation because it encountered a client request loop. Please contact your app vendor.",
            status: 429)
    }

    /// "Need admin approval", answered with "Return to the application without granting consent".
    static let adminConsentRequired = entra("access_denied", 90094, "The grant requires admin permission.")

    static func unsupportedResponseType(_ type: String) -> ServiceError {
        entra("unsupported_response_type", 700054, "response_type '\(type)' is not enabled for the application.")
    }

    static func missingParameter(_ name: String) -> ServiceError {
        entra("invalid_request", 900144, "The request body must contain the following parameter: '\(name)'.")
    }

    static func invalidRequest(_ code: Int, _ message: String) -> ServiceError { entra("invalid_request", code, message) }

    static func invalidScope(_ scope: String) -> ServiceError {
        entra(
            "invalid_scope", 70011, "The provided value for the input parameter 'scope' is not valid. The scope '\(scope)' does not exist.")
    }

    static func invalidResource(_ resource: String, tenant: String) -> ServiceError {
        entra(
            "invalid_resource", 500011,
            "The resource principal named \(resource) was not found in the tenant named \(tenant). This can happen if the "
                + "application has not been installed by the administrator of the tenant or consented to by any user in the tenant. "
                + "You might have sent your authentication request to the wrong tenant."
        )
    }

    static func unknownClient(_ clientID: String, tenant: String) -> ServiceError {
        entra(
            "unauthorized_client", 700016,
            "Application with identifier '\(clientID)' was not found in the directory '\(tenant)'. This can happen if the "
                + "application has not been installed by the administrator of the tenant or consented to by any user in the tenant. "
                + "You may have sent your authentication request to the wrong tenant."
        )
    }

    static func redirectURINotRegistered(_ uri: String, clientID: String) -> ServiceError {
        entra(
            "invalid_request", 50011,
            "The redirect URI '\(uri)' specified in the request does not match the redirect URIs configured for the application "
                + "'\(clientID)'. Make sure the redirect URI sent in the request matches one added to your application in the Azure "
                + "portal. Navigate to https://aka.ms/redirectUriMismatchError to learn more about how to fix this."
        )
    }

    static func tenantNotFound(_ tenant: String) -> ServiceError {
        entra(
            "invalid_tenant", 90002,
            "Tenant '\(tenant)' not found. Check to make sure you have the correct tenant ID and are signing into the correct "
                + "cloud. Check with your subscription administrator, this may happen if there are no active subscriptions for the "
                + "tenant."
        )
    }

    /// The sign-in pages' `ctx` (or `/login.srf`'s `wctx`) names no transaction: it expired, it
    /// finished, or it was made up.
    static let flowTokenExpired = entra(
        "invalid_request", 50089, "Authentication failed due to flow token expired. Go back to the application and sign in again.")

    // Federation: the organisation's identity provider's answer at /login.srf

    /// Not a WS-Federation answer Entra can read, for the wrong audience, or one seen before.
    static let samlTokenInvalid = entra("invalid_request", 50008, "SAML token is invalid.")

    /// The digest or the signature does not match the domain's registered signing certificate.
    static let samlSignatureInvalid = entra(
        "invalid_request", 50006, "Signature verification failed because of an invalid signature.")

    /// The answer was signed with a certificate the federated domain did not register.
    static let samlSigningKeyNotRegistered = entra(
        "invalid_request", 5_000_811,
        "Unable to verify token signature. The signing key identifier does not match any valid registered keys.")

    /// No federated domain of the tenant has this issuer URI.
    static func federationRealmNotFound(_ issuer: String) -> ServiceError {
        entra("invalid_request", 50107, "The requested federation realm object '\(issuer)' does not exist.")
    }

    /// The assertion is not yet, or no longer, valid.
    static func samlAssertionNotValidNow(now: Date, notBefore: Date, notOnOrAfter: Date) -> ServiceError {
        entra(
            "invalid_request", 500_133,
            "Assertion is not within its valid time range. Current time: \(now.entraTimestamp), assertion valid from "
                + "\(notBefore.entraTimestamp) to \(notOnOrAfter.entraTimestamp).")
    }

    /// The assertion's user (`UPN`, `ImmutableID`) is missing, outside the provider's domain, or
    /// not the user this sign-in was sent to the provider for.
    static func samlUserInvalid(_ detail: String) -> ServiceError {
        entra("invalid_request", 5_000_819, "SAML Assertion is invalid. \(detail)")
    }

    /// The provider vouched for a user the tenant does not have.
    static func userNotInDirectory(_ userName: String, tenant: String) -> ServiceError {
        entra(
            "invalid_request", 50034,
            "The user account \(userName) does not exist in the \(tenant) directory. To sign into this application, the account "
                + "must be added to the directory.")
    }

    // Token endpoint

    static let codeRedeemed = entra(
        "invalid_grant", 54005,
        "OAuth2 Authorization code was already redeemed, please retry with a new valid code or use an existing refresh token.")
    static let grantExpired = entra(
        "invalid_grant", 70008,
        "The provided authorization code or refresh token has expired due to inactivity. Send a new interactive authorization "
            + "request for this user and resource."
    )
    static let verifierMismatch = entra(
        "invalid_grant", 501481,
        "The Code_Verifier does not match the code_challenge supplied in the authorization request.")
    static let malformedGrant = entra("invalid_grant", 9_002_313, "Invalid request. Request is malformed or invalid.")
    static let grantForAnotherClient = entra("invalid_grant", 70000, "Provided grant is invalid or malformed.")
    static let publicClientSentSecret = entra(
        "invalid_client", 700025,
        "Client is public so neither 'client_assertion' nor 'client_secret' should be presented.", status: 401)

    static func redirectMismatch(sent: String, expected: String) -> ServiceError {
        ServiceError(
            error: "invalid_client", codes: [70002, 50011],
            message:
                "Error validating credentials. {inner}: The reply address '\(sent)' does not match the reply address "
                + "'\(expected)' provided when requesting Authorization code.",
            service: .entra, status: 401)
    }

    static func refreshTokenInactive(issued: Date) -> ServiceError {
        entra(
            "invalid_grant", 700082,
            "The refresh token has expired due to inactivity. The token was issued on \(issued.graphTimestamp).0000000Z and was "
                + "inactive for 90.00:00:00."
        )
    }

    /// Strict rotation: a refresh token redeemed twice revokes its family (reuse detection).
    static let refreshTokenReused = entra(
        "invalid_grant", 50173,
        "The provided grant has expired due to it being revoked, a fresh auth token is needed. The refresh token was already "
            + "used; every token of its sign-in is revoked (refresh token reuse detected).")

    static func refreshTokenRevoked(issued: Date, validFrom: Date) -> ServiceError {
        entra(
            "invalid_grant", 50173,
            "The provided grant has expired due to it being revoked, a fresh auth token is needed. The user might have changed "
                + "or reset their password. The grant was issued on '\(issued.graphTimestamp).0000000Z' and the TokensValidFrom date "
                + "(before which tokens are not valid) for this user is '\(validFrom.graphTimestamp).0000000Z'."
        )
    }

    static func unsupportedGrantType(_ type: String) -> ServiceError {
        entra("unsupported_grant_type", 70003, "The app requested an unsupported grant type '\(type)'.")
    }

    // Device code flow (RFC 8628): texts as Entra sends them (issues pasting real answers), and
    // for a declined or unknown code as Entra documents them. Entra sends no `slow_down`.

    static let authorizationPending = entra(
        "authorization_pending", 70016, "OAuth 2.0 device flow error. Authorization is pending. Continue polling.")
    static let authorizationDeclined = entra("authorization_declined", 70000, "The end user denied the authorization request.")
    static let deviceCodeExpired = entra(
        "expired_token", 70020, "The provided value for the input parameter 'device_code' is not valid. This device code has expired.")
    static let badVerificationCode = entra(
        "bad_verification_code", 70018, "Invalid verification code due to User typing in wrong user code for device code flow.")
    static let b2cDeviceCodeUnsupported = b2c(
        "unsupported_grant_type", 90086, "The supplied grant_type [urn:ietf:params:oauth:grant-type:device_code] is not supported.")

    // B2C

    static let forgotPassword = b2c("access_denied", 90118, "The user has forgotten their password.")
    static let cancelledSelfAsserted = b2c("access_denied", 90091, "The user has cancelled entering self-asserted information.")
    static let b2cNoSession = b2c(
        "login_required", 90077,
        "User does not have an existing session and request prompt parameter has a value of 'None'.")
    static let b2cGrantRevoked = b2c("invalid_grant", 90129, "The provided grant has been revoked. Please reauthenticate and try again.")
    static let b2cVerifierMismatch = b2c("invalid_grant", 90182, "The supplied code_verifier does not match associated code_challenge.")
    static let b2cPublicClientSentSecret = b2c(
        "invalid_request", 90084,
        "Public clients should not send a client_secret when redeeming a publicly acquired grant.")
    static let b2cMalformedGrant = b2c("invalid_grant", 90090, "The provided JWE is not a valid 5 segment token.")

    static func b2cGrantExpired(now: Date, issued: Date, expires: Date) -> ServiceError {
        b2c(
            "invalid_grant", 90080,
            "The provided grant has expired. Please re-authenticate and try again. Current time: \(now.epochSeconds), Grant "
                + "issued time: \(issued.epochSeconds), Grant expiration time: \(expires.epochSeconds)"
        )
    }

    static func b2cWrongPolicy(actual: String, expected: String) -> ServiceError {
        b2c(
            "invalid_grant", 90088,
            "The provided grant has not been issued for this endpoint. Actual Value : \(actual) and Expected Value : \(expected)")
    }

    static func b2cRedirectNotRegistered(_ uri: String, clientID: String) -> ServiceError {
        b2c(
            "redirect_uri_mismatch", 90006,
            "The redirect URI '\(uri)' provided in the request is not registered for the client id '\(clientID)'.")
    }
}
