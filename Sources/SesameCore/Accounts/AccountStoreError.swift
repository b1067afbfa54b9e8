import FoundationEssentials

/// Why signing in or getting a token failed. Each error says what a user can do about it and
/// never carries a code, a token, a `state` or a secret.
public struct AccountStoreError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure; compare with the static members (`error.code == .interactionRequired`).
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// No configuration is registered for the account type.
        public static let unknownAccountType = Code("unknownAccountType")
        /// The redirect carried neither `code` nor `error`.
        public static let malformedRedirect = Code("malformedRedirect")
        /// B2C's AADB2C90118: the user picked "Forgot your password?"; start the reset policy.
        public static let passwordResetRequested = Code("passwordResetRequested")
        /// The user cancelled (B2C's AADB2C90091, `error_subcode=cancel`, or the window closed).
        public static let cancelled = Code("cancelled")
        /// The user moved the sign-in to the system browser ("Continue in your browser"): the
        /// caller starts it again there.
        public static let handedOffToBrowser = Code("handedOffToBrowser")
        /// The identity service answered the sign-in with an error (e.g. consent declined).
        public static let authorizationFailed = Code("authorizationFailed")
        /// The token endpoint refused the request for a reason a new sign-in will not fix.
        public static let tokenRequestFailed = Code("tokenRequestFailed")
        /// Only an interactive sign-in can give a new token (`invalid_grant`, `interaction_required`).
        public static let interactionRequired = Code("interactionRequired")
        /// The id_token failed validation.
        public static let invalidIDToken = Code("invalidIDToken")
        /// The identity service's answer could not be read.
        public static let invalidResponse = Code("invalidResponse")
        /// The discovery document or signing keys could not be fetched.
        public static let providerMetadataUnavailable = Code("providerMetadataUnavailable")
        /// The account is not in the store (removed meanwhile).
        public static let accountNotFound = Code("accountNotFound")
        /// The network failed.
        public static let network = Code("network")
        /// The sign-in page could not be shown (no display, no browser to open).
        public static let userAgentUnavailable = Code("userAgentUnavailable")
        /// The identity service asked the client to slow down (HTTP 429, AADSTS50196) for longer
        /// than Sesame waits.
        public static let throttled = Code("throttled")
        /// The device code sign-in was declined at the verification page (`authorization_declined`).
        public static let deviceCodeDeclined = Code("deviceCodeDeclined")
        /// The device code expired before the user signed in with it (`expired_token`).
        public static let deviceCodeExpired = Code("deviceCodeExpired")
        /// The token cache cannot be read or written: ``AccountStoreError/storageProblem`` says
        /// why (a locked keyring, no keyring, a full or read-only disk).
        public static let storageUnavailable = Code("storageUnavailable")
    }

    /// The kind of failure.
    public let code: Code
    /// A sentence for the user.
    public let message: String
    /// The OAuth `error` field, if the service sent one.
    public var oauthError: String?
    /// The service's own code: `AADSTS65004`, `AADB2C90118`, ….
    public var serviceCode: String?
    /// `error_description` as sent (it carries trace and correlation ids, no secrets).
    public var errorDescription: String?
    /// `error_uri`.
    public var errorURI: String?
    /// The account type concerned.
    public var accountType: String?
    /// The home account id concerned (for ``Code-swift.struct/interactionRequired``).
    public var homeAccountID: String?
    /// `claims`: a claims challenge (Conditional Access asking for MFA, say), a JSON string the
    /// next interactive sign-in must send on `/authorize`.
    public var claimsChallenge: String?
    /// For ``Code-swift.struct/throttled``: how long the service asked to wait (`Retry-After`).
    public var retryAfter: Duration?
    /// For ``Code-swift.struct/storageUnavailable``: what stands in the way.
    public var storageProblem: TokenStorageError.Problem?
    /// For ``Code-swift.struct/storageUnavailable``: where the sign-ins are kept (a folder, or
    /// `Secret Service`).
    public var storageLocation: String?
    /// For ``Code-swift.struct/network`` and ``Code-swift.struct/providerMetadataUnavailable``:
    /// the exchange that got no answer, and why (refused, no such host, the proxy's refusal, …).
    public var transportFailure: HTTPTransportError?
    /// For ``Code-swift.struct/invalidIDToken``: which check the ID token failed.
    public var idTokenFailure: IDTokenValidationError?

    /// An error of `code` with a user-facing message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// An error of `code` for a failure underneath: when the cause is an exchange that got no
    /// answer, it is kept as ``transportFailure`` so the user reads what happened to which host.
    /// - Parameter message: the sentence's beginning; the cause's description follows a colon.
    init(_ code: Code, _ message: String, cause: any Error) {
        self.init(code, "\(message): \(cause)")
        transportFailure = cause as? HTTPTransportError
    }

    public var description: String {
        var text = message
        if let serviceCode, !message.contains(serviceCode) { text += " (\(serviceCode))" }
        return text
    }

    /// The error for a storage backend's failure: a sentence for its problem, the problem kept.
    public static func from(_ error: TokenStorageError) -> AccountStoreError {
        let sentence: String
        switch error.problem {
        case .keyringLocked:
            sentence = "Your keyring is locked, and your sign-ins are inside it. Unlock it, then try again; nothing is lost."
        case .keyringUnavailable:
            sentence =
                "Your sign-ins are in the desktop keyring, which does not answer here (no session bus or keyring daemon). Use Sesame in your desktop session."
        case .diskFull:
            sentence =
                "There is no room left on the disk for your sign-ins (\(error.location)). Free some space, then try again; nothing is lost."
        case .readOnly:
            sentence = "Your sign-ins cannot be saved in \(error.location): it is read-only, or not yours to write. Nothing is lost."
        case .other:
            sentence = "The token cache could not be used: \(error)"
        }
        var converted = AccountStoreError(.storageUnavailable, sentence)
        converted.storageProblem = error.problem
        converted.storageLocation = error.location
        return converted
    }

    /// The first `AADSTSnnnnn` or `AADB2Cnnnnn` in a description.
    static func serviceCode(in description: String?) -> String? {
        guard let description else { return nil }
        for prefix in ["AADB2C", "AADSTS"] {
            guard let range = description.firstRange(of: prefix) else { continue }
            let digits = description[range.upperBound...].prefix { $0.isNumber }
            if !digits.isEmpty { return prefix + digits }
        }
        return nil
    }

    /// The error for an error redirect, with B2C's two special cases typed.
    static func from(_ response: AuthorizationErrorResponse, accountType: String) -> AccountStoreError {
        let serviceCode = serviceCode(in: response.errorDescription)
        let firstLine = response.errorDescription?.split(whereSeparator: \.isNewline).first.map(String.init)
        var error: AccountStoreError
        if serviceCode == "AADB2C90118" {
            error = AccountStoreError(.passwordResetRequested, "The user asked to reset their password.")
        } else if serviceCode == "AADB2C90091" || response.errorSubcode == "cancel" {
            error = AccountStoreError(.cancelled, "Sign-in was cancelled.")
        } else if let advice = ServiceErrorAdvice.sentence(
            for: serviceCode, strength: AuthenticationStrength(namedIn: response.errorDescription ?? ""))
        {
            error = AccountStoreError(.authorizationFailed, advice)
        } else {
            error = AccountStoreError(.authorizationFailed, firstLine ?? "The identity service refused the sign-in (\(response.error)).")
        }
        error.oauthError = response.error
        error.serviceCode = serviceCode
        error.errorDescription = response.errorDescription
        error.errorURI = response.errorURI
        error.accountType = accountType
        return error
    }

    /// The error for a token endpoint refusal.
    static func from(_ response: OAuthErrorResponse, accountType: String, homeAccountID: String?) -> AccountStoreError {
        let code = serviceCode(in: response.errorDescription) ?? response.errorCodes.first.map { "AADSTS\($0)" }
        let strength = AuthenticationStrength(
            namedIn: (response.claims ?? "").prefix(4096) + "\n" + (response.errorDescription ?? "").prefix(4096))
        let advice = ServiceErrorAdvice.sentence(for: code, strength: strength)
        var error = AccountStoreError(
            response.requiresInteraction ? .interactionRequired : .tokenRequestFailed,
            response.requiresInteraction
                ? advice ?? "Sign in again: \(response.summary)"
                : advice ?? "The token request was refused: \(response.summary)")
        error.claimsChallenge = response.claims.flatMap { $0.isEmpty ? nil : $0 }
        error.oauthError = response.error
        error.serviceCode = code
        error.errorDescription = response.errorDescription
        error.errorURI = response.errorURI
        error.accountType = accountType
        error.homeAccountID = homeAccountID
        return error
    }
}

extension AccountStoreError: Equatable {
    public static func == (lhs: AccountStoreError, rhs: AccountStoreError) -> Bool {
        lhs.code == rhs.code && lhs.message == rhs.message && lhs.serviceCode == rhs.serviceCode
    }
}
