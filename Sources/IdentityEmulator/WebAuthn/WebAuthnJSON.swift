import FoundationEssentials

/// `PublicKeyCredentialCreationOptionsJSON` (WebAuthn Level 3 §5.1.x): what the page passes to
/// `PublicKeyCredential.parseCreationOptionsFromJSON` before `navigator.credentials.create`.
/// Binary fields are base64url.
struct PublicKeyCredentialCreationOptionsJSON: Codable, Sendable, Equatable {
    struct RelyingParty: Codable, Sendable, Equatable {
        let id: String
        let name: String
    }
    struct User: Codable, Sendable, Equatable {
        /// The user handle, base64url.
        let id: String
        let name: String
        let displayName: String
    }
    struct Parameters: Codable, Sendable, Equatable {
        var type = "public-key"
        let alg: Int
    }
    struct AuthenticatorSelection: Codable, Sendable, Equatable {
        var residentKey = "required"
        var requireResidentKey = true
        let userVerification: String
    }

    let rp: RelyingParty
    let user: User
    let challenge: String
    let pubKeyCredParams: [Parameters]
    /// Milliseconds.
    let timeout: Int
    let excludeCredentials: [PublicKeyCredentialDescriptorJSON]
    let authenticatorSelection: AuthenticatorSelection
    /// `direct`, as Entra asks (Graph's `webauthnCredentialCreationOptions`).
    let attestation: String
}

/// `PublicKeyCredentialRequestOptionsJSON`: what the page passes to
/// `PublicKeyCredential.parseRequestOptionsFromJSON` before `navigator.credentials.get`.
struct PublicKeyCredentialRequestOptionsJSON: Codable, Sendable, Equatable {
    let challenge: String
    let timeout: Int
    let rpId: String
    /// Empty for a username-less sign-in: the authenticator offers its discoverable credentials.
    let allowCredentials: [PublicKeyCredentialDescriptorJSON]
    let userVerification: String
}

/// `PublicKeyCredentialDescriptorJSON`: a credential named by id (base64url).
struct PublicKeyCredentialDescriptorJSON: Codable, Sendable, Equatable {
    var type = "public-key"
    let id: String
    var transports: [String]? = nil
}

/// The browser's answer to `navigator.credentials.create`, as `PublicKeyCredential.toJSON()`
/// writes it (`RegistrationResponseJSON`).
struct RegistrationResponseJSON: Codable, Sendable, Equatable {
    struct Response: Codable, Sendable, Equatable {
        let clientDataJSON: String
        let attestationObject: String
        var transports: [String]? = nil
    }
    let id: String
    let rawId: String
    let type: String
    let response: Response
    var authenticatorAttachment: String? = nil

    static let maximumSize = 128 * 1024

    /// Reads the answer the page posts, bounded.
    static func parse(_ data: Data) throws(WebAuthnRefusal) -> RegistrationResponseJSON {
        guard data.count <= maximumSize else { throw .malformedResponse("the registration answer is larger than 128 KiB") }
        guard let value = try? JSONDecoder().decode(Self.self, from: data) else {
            throw .malformedResponse("the registration answer is not RegistrationResponseJSON")
        }
        return value
    }
}

/// The browser's answer to `navigator.credentials.get` (`AuthenticationResponseJSON`).
struct AuthenticationResponseJSON: Codable, Sendable, Equatable {
    struct Response: Codable, Sendable, Equatable {
        let clientDataJSON: String
        let authenticatorData: String
        let signature: String
        /// The user handle the discoverable credential holds; absent for a non-discoverable one.
        var userHandle: String? = nil
    }
    let id: String
    let rawId: String
    let type: String
    let response: Response
    var authenticatorAttachment: String? = nil

    static let maximumSize = 32 * 1024

    static func parse(_ data: Data) throws(WebAuthnRefusal) -> AuthenticationResponseJSON {
        guard data.count <= maximumSize else { throw .malformedResponse("the sign-in answer is larger than 32 KiB") }
        guard let value = try? JSONDecoder().decode(Self.self, from: data) else {
            throw .malformedResponse("the sign-in answer is not AuthenticationResponseJSON")
        }
        return value
    }
}
