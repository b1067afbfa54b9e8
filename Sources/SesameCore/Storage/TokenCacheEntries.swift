import FoundationEssentials

/// An `AccessToken` entry of MSAL's unified cache.
public struct AccessTokenEntry: Sendable, Hashable {
    /// `secret`: the access token.
    public var secret: Secret
    /// `home_account_id`: `uid.utid`.
    public var homeAccountID: String
    /// `environment`: the authority host, `login.microsoftonline.com`.
    public var environment: String
    /// `client_id`.
    public var clientID: String
    /// `realm`: the tenant (first path segment of the token endpoint).
    public var realm: String
    /// `target`: granted scopes, sorted, space-joined.
    public var target: String
    /// `token_type`: `Bearer`.
    public var tokenType: String
    /// `cached_at`: epoch seconds (written as a string).
    public var cachedAt: Int
    /// `expires_on`: epoch seconds (written as a string).
    public var expiresOn: Int
    /// `extended_expires_on`.
    public var extendedExpiresOn: Int?
    /// `refresh_on`.
    public var refreshOn: Int?
    /// Fields Sesame does not model, kept.
    public var extras: [String: JSONValue] = [:]

    /// The scopes of ``target``.
    public var scopes: Set<String> { Set(target.split(separator: " ").map { $0.lowercased() }) }
}

/// A `RefreshToken` entry.
public struct RefreshTokenEntry: Sendable, Hashable {
    /// `secret`: the refresh token.
    public var secret: Secret
    /// `home_account_id`.
    public var homeAccountID: String
    /// `environment`.
    public var environment: String
    /// `client_id`.
    public var clientID: String
    /// `target`.
    public var target: String
    /// `last_modification_time`: epoch seconds.
    public var lastModificationTime: Int?
    /// `family_id` (FOCI).
    public var familyID: String?
    /// Fields Sesame does not model, kept.
    public var extras: [String: JSONValue] = [:]
}

/// An `IdToken` entry.
public struct IDTokenEntry: Sendable, Hashable {
    /// `secret`: the raw JWT.
    public var secret: Secret
    /// `home_account_id`.
    public var homeAccountID: String
    /// `environment`.
    public var environment: String
    /// `realm`.
    public var realm: String
    /// `client_id`.
    public var clientID: String
    /// Fields Sesame does not model, kept.
    public var extras: [String: JSONValue] = [:]
}

/// An `Account` entry.
public struct AccountEntry: Sendable, Hashable {
    /// `home_account_id`.
    public var homeAccountID: String
    /// `environment`.
    public var environment: String
    /// `realm`.
    public var realm: String
    /// `local_account_id`: the id_token's `oid`, else `sub`.
    public var localAccountID: String
    /// `username`: `preferred_username`, else `upn`, else `""` (never null).
    public var username: String
    /// `authority_type`: `MSSTS`.
    public var authorityType: String
    /// `account_source`: `authorization_code`, ….
    public var accountSource: String?
    /// `name`: the display name from the id_token.
    public var name: String?
    /// `sesame_interaction_required`: the last silent refresh was refused; the account stays,
    /// marked, until the user signs in again. (A Sesame field; MSAL keeps unknown fields.)
    public var interactionRequired: Bool = false
    /// Fields Sesame does not model, kept.
    public var extras: [String: JSONValue] = [:]
}

/// An `AppMetadata` entry.
public struct AppMetadataEntry: Sendable, Hashable {
    /// `client_id`.
    public var clientID: String
    /// `environment`.
    public var environment: String
    /// `family_id`.
    public var familyID: String?
    /// Fields Sesame does not model, kept.
    public var extras: [String: JSONValue] = [:]
}

// MARK: - Reading and writing MSAL's JSON

extension AccessTokenEntry {
    init(json: [String: JSONValue]) throws {
        var fields = CacheEntryFields(json)
        _ = fields.string("credential_type")
        secret = Secret(try fields.required("secret", in: "AccessToken"))
        homeAccountID = try fields.required("home_account_id", in: "AccessToken")
        environment = try fields.required("environment", in: "AccessToken")
        clientID = try fields.required("client_id", in: "AccessToken")
        realm = fields.string("realm") ?? ""
        target = fields.string("target") ?? ""
        tokenType = fields.string("token_type") ?? "Bearer"
        cachedAt = fields.seconds("cached_at") ?? 0
        guard let expiresOn = fields.seconds("expires_on") else {
            throw DecodingError.keyNotFound(
                AnyCodingKey("expires_on"), .init(codingPath: [], debugDescription: "AccessToken entry has no expires_on"))
        }
        self.expiresOn = expiresOn
        extendedExpiresOn = fields.seconds("extended_expires_on")
        refreshOn = fields.seconds("refresh_on")
        extras = fields.remaining
    }

    var json: [String: JSONValue] {
        var writer = CacheEntryWriter(extras: extras)
        writer.set("credential_type", "AccessToken")
        writer.set("secret", secret.revealed)
        writer.set("home_account_id", homeAccountID)
        writer.set("environment", environment)
        writer.set("client_id", clientID)
        writer.set("target", target)
        writer.set("realm", realm)
        writer.set("token_type", tokenType)
        writer.set("cached_at", seconds: cachedAt)
        writer.set("expires_on", seconds: expiresOn)
        writer.set("extended_expires_on", seconds: extendedExpiresOn)
        writer.set("refresh_on", seconds: refreshOn)
        return writer.object
    }

    /// MSAL's key: `{home_account_id}-{environment}-accesstoken-{client_id}-{realm}-{target}`, lower-cased.
    var key: String {
        [homeAccountID, environment, "accesstoken", clientID, realm, target].joined(separator: "-").lowercased()
    }
}

extension RefreshTokenEntry {
    init(json: [String: JSONValue]) throws {
        var fields = CacheEntryFields(json)
        _ = fields.string("credential_type")
        secret = Secret(try fields.required("secret", in: "RefreshToken"))
        homeAccountID = try fields.required("home_account_id", in: "RefreshToken")
        environment = try fields.required("environment", in: "RefreshToken")
        clientID = try fields.required("client_id", in: "RefreshToken")
        target = fields.string("target") ?? ""
        lastModificationTime = fields.seconds("last_modification_time")
        familyID = fields.string("family_id")
        extras = fields.remaining
    }

    var json: [String: JSONValue] {
        var writer = CacheEntryWriter(extras: extras)
        writer.set("credential_type", "RefreshToken")
        writer.set("secret", secret.revealed)
        writer.set("home_account_id", homeAccountID)
        writer.set("environment", environment)
        writer.set("client_id", clientID)
        writer.set("target", target)
        writer.set("last_modification_time", seconds: lastModificationTime)
        writer.set("family_id", familyID)
        return writer.object
    }

    /// MSAL's key: `{home_account_id}-{environment}-refreshtoken-{client_id}--{target}` (refresh
    /// tokens are cross-tenant: empty realm), lower-cased.
    var key: String {
        [homeAccountID, environment, "refreshtoken", clientID, "", target].joined(separator: "-").lowercased()
    }
}

extension IDTokenEntry {
    init(json: [String: JSONValue]) throws {
        var fields = CacheEntryFields(json)
        _ = fields.string("credential_type")
        secret = Secret(try fields.required("secret", in: "IdToken"))
        homeAccountID = try fields.required("home_account_id", in: "IdToken")
        environment = try fields.required("environment", in: "IdToken")
        realm = fields.string("realm") ?? ""
        clientID = try fields.required("client_id", in: "IdToken")
        extras = fields.remaining
    }

    var json: [String: JSONValue] {
        var writer = CacheEntryWriter(extras: extras)
        writer.set("credential_type", "IdToken")
        writer.set("secret", secret.revealed)
        writer.set("home_account_id", homeAccountID)
        writer.set("environment", environment)
        writer.set("realm", realm)
        writer.set("client_id", clientID)
        return writer.object
    }

    /// MSAL's key: `{home_account_id}-{environment}-idtoken-{client_id}-{realm}-`, lower-cased.
    var key: String {
        [homeAccountID, environment, "idtoken", clientID, realm, ""].joined(separator: "-").lowercased()
    }
}

extension AccountEntry {
    init(json: [String: JSONValue]) throws {
        var fields = CacheEntryFields(json)
        homeAccountID = try fields.required("home_account_id", in: "Account")
        environment = try fields.required("environment", in: "Account")
        realm = fields.string("realm") ?? ""
        localAccountID = fields.string("local_account_id") ?? ""
        username = fields.string("username") ?? ""
        authorityType = fields.string("authority_type") ?? "MSSTS"
        accountSource = fields.string("account_source")
        name = fields.string("name")
        interactionRequired = fields.string("sesame_interaction_required") == "true"
        extras = fields.remaining
    }

    var json: [String: JSONValue] {
        var writer = CacheEntryWriter(extras: extras)
        writer.set("home_account_id", homeAccountID)
        writer.set("environment", environment)
        writer.set("realm", realm)
        writer.set("local_account_id", localAccountID)
        writer.set("username", username)
        writer.set("authority_type", authorityType)
        writer.set("account_source", accountSource)
        writer.set("name", name)
        if interactionRequired { writer.set("sesame_interaction_required", "true") }
        return writer.object
    }

    /// MSAL's key: `{home_account_id}-{environment}-{realm}`, lower-cased.
    var key: String {
        [homeAccountID, environment, realm].joined(separator: "-").lowercased()
    }
}

extension AppMetadataEntry {
    init(json: [String: JSONValue]) throws {
        var fields = CacheEntryFields(json)
        clientID = try fields.required("client_id", in: "AppMetadata")
        environment = try fields.required("environment", in: "AppMetadata")
        familyID = fields.string("family_id")
        extras = fields.remaining
    }

    var json: [String: JSONValue] {
        var writer = CacheEntryWriter(extras: extras)
        writer.set("client_id", clientID)
        writer.set("environment", environment)
        writer.set("family_id", familyID)
        return writer.object
    }

    /// MSAL's key: `appmetadata-{environment}-{client_id}` (not lower-cased, as MSAL writes it).
    var key: String { "appmetadata-\(environment)-\(clientID)" }
}
