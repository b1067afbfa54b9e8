import FoundationEssentials

/// The errors a tenant's own settings answer with (``TenantPolicy``): Conditional Access, account
/// states, consent workflows, other organizations' users, public client flows — as Entra words them.
enum RefusalErrors {

    static let conditionalAccessBlocked = ServiceError.entra(
        "access_denied", 53003, "Access has been blocked by Conditional Access policies. The access policy does not allow token issuance.")
    static let deviceNotCompliant = ServiceError.entra(
        "access_denied", 53000,
        "Device is not in required device state: compliant. Conditional Access policy requires a compliant device, and the device "
            + "is not compliant. The user must enroll their device with an approved MDM provider like Intune.")
    static let deviceNotManaged = ServiceError.entra(
        "access_denied", 530003, "Your device is required to be managed to access this resource.")
    /// A Conditional Access rule asks for a registered device and the sign-in presented none.
    static let deviceAuthenticationRequired = ServiceError.entra("invalid_grant", 50097, "Device authentication is required.")
    /// The PRT's device (or its certificate, or what it signed) could not be verified.
    static let deviceAuthenticationFailed = ServiceError.entra("invalid_grant", 50155, "Device authentication failed for this user.")
    /// The device a PRT was issued to was disabled by an administrator.
    static let deviceDisabled = ServiceError.entra("invalid_grant", 135_011, "Device used during the authentication is disabled.")

    /// The device a PRT was issued to is no longer in the directory.
    static func deviceNotFound(_ deviceID: String, tenant: String) -> ServiceError {
        .entra("invalid_grant", 700_003, "Device object was not found in the tenant '\(tenant)' directory.")
    }

    static let accountLocked = ServiceError.entra(
        "invalid_grant", 50053, "The account is locked, you've tried to sign in too many times with an incorrect user ID or password.")
    static let accountDisabled = ServiceError.entra("invalid_grant", 50057, "The user account is disabled.")
    static let passwordExpired = ServiceError.entra("invalid_grant", 50055, "The password is expired.")
    static let publicClientFlowsDisabled = ServiceError.entra(
        "invalid_client", 7_000_218, "The request body must contain the following parameter: 'client_assertion' or 'client_secret'.",
        status: 401)
    /// "Approval required" (the admin consent workflow), answered with "Return to the application".
    static let adminConsentRequestable = ServiceError.entra(
        "access_denied", 90095,
        "Admin consent is required for the permissions requested by this application. An admin consent request may be sent to the "
            + "admin.")

    static func mfaRegistrationRequired(resource: String) -> ServiceError {
        var error = ServiceError.entra(
            "invalid_grant", 50079,
            "Due to a configuration change made by your administrator, or because you moved to a new location, you must enroll in "
                + "multi-factor authentication to access '\(resource)'.")
        error.suberror = "basic_action"
        return error
    }

    static func userFromOtherTenant(_ user: String, home: String, tenant: Tenant, clientID: String, appName: String) -> ServiceError {
        ServiceError.entra(
            "invalid_request", 50020,
            "User account '\(user)' from identity provider 'https://sts.windows.net/\(home)/' does not exist in tenant "
                + "'\(tenant.displayName)' and cannot access the application '\(clientID)'(\(appName)) in that tenant. The account needs "
                + "to be added as an external user in the tenant first. Sign out and sign in again with a different Azure Active "
                + "Directory user account.")
    }

}

extension RefusalErrors {
    /// A Conditional Access rule demands an authentication strength the sign-in cannot meet (no
    /// registered method satisfies it). Microsoft documents no code of its own for this page; the
    /// emulator answers AADSTS50074 ("UserStrongAuthClientAuthNRequiredInterrupt"), naming the
    /// strength and what satisfies it (docs/EMULATOR.md).
    static func authenticationStrengthUnmet(_ strength: AuthenticationStrength) -> ServiceError {
        .entra(
            "interaction_required", 50074,
            "Strong authentication is required and the user did not pass the MFA challenge. This app requires the authentication "
                + "strength '\(strength.displayName)': \(strength.satisfiedBy).")
    }

    /// The user answered Microsoft Authenticator's notification "No, it's not me" (report
    /// suspicious activity): the sign-in is denied (AADSTS500121, "Authentication failed during
    /// strong authentication request"; the sign-in logs say "MFA denied, Fraud Code Entered").
    static let fraudReported = ServiceError.entra(
        "access_denied", 500_121,
        "Authentication failed during strong authentication request. The user reported the sign-in request as fraud.")

    /// A refresh whose sign-in does not meet the rule's authentication strength: AADSTS50076 with
    /// a claims challenge, as for MFA, the strength named.
    static func authenticationStrengthRequired(_ strength: AuthenticationStrength, resource: String) -> ServiceError {
        var error = ServiceError.mfaRequired(resource: resource)
        error.message += " The authentication strength '\(strength.displayName)' is required."
        return error
    }
}
