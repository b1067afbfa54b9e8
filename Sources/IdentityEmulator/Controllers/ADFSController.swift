import FoundationEssentials
import HTTPTypes
import Hummingbird

/// The federated organisation's own identity provider: Fabrikam's AD FS, WS-Federation's passive
/// endpoint `/adfs/ls/`. It shows its own password page, checks the password, and answers with an
/// auto-submitting form that posts its signed assertion back to Entra's `/login.srf`.
///
/// The same listener serves it, but only under the federation host name
/// (``EmulatorConfiguration/federationHostname``): asked under Entra's name it answers 404, as
/// another server would, so a browser that signs a federated user in really crosses hosts. Its
/// users are the tenant directory's users of its domain (as if Entra Connect synchronised them
/// from its Active Directory); their password is checked here, never by Entra.
struct ADFSController: EmulatorController {
    let services: EmulatorServices

    /// The passive endpoint's path (`PassiveLogOnUri`'s).
    static let passivePath = "/adfs/ls/"
    /// How long its assertions are valid (AD FS's default token lifetime for Entra: an hour).
    static let assertionLifetime: TimeInterval = 3600
    /// The most a sign-in form may post.
    static let formLimit = 16 * 1024

    // MARK: GET and POST /adfs/ls/

    /// `GET /adfs/ls/?wa=wsignin1.0&wtrealm=…&wctx=…&username=…` shows the sign-in page; `POST`
    /// to the same address checks it.
    func passiveSignIn(_ request: Request) async -> Response {
        let now = clock.now
        guard services.isFederationHost(request), let domain = domain(for: request) else {
            return .html(SignInPages.notFound(), status: .notFound)
        }
        let query = request.queryFields
        guard query["wa"] == WSFederation.signIn else {
            return errorPage(domain, Self.notCompliant, now)
        }
        guard query["wtrealm"] == WSFederation.microsoftOnlineRealm else {
            return errorPage(
                domain, "MSIS7007: The requested relying party trust '\(query["wtrealm"] ?? "")' is unspecified or unsupported.", now)
        }
        let wctx = query["wctx"]
        guard (wctx?.utf8.count ?? 0) <= WSFederation.maximumContextLength, (query["username"]?.utf8.count ?? 0) <= 256 else {
            return errorPage(domain, Self.notCompliant, now)
        }
        // The form posts back to the same address: the relying party's parameters, rebuilt from
        // the ones read (nothing else of the query is echoed).
        var echoed = FormFields([("wa", WSFederation.signIn), ("wtrealm", WSFederation.microsoftOnlineRealm)])
        if let wctx { echoed.append("wctx", wctx) }
        if let username = query["username"] { echoed.append("username", username) }
        if let correlation = query.nonEmpty("client-request-id"), correlation.utf8.count <= 64 {
            echoed.append("client-request-id", correlation)
        }
        let action = Self.passivePath + "?" + echoed.encoded

        guard request.method == .post else {
            return page(domain, action: action, userName: query.nonEmpty("username"), error: nil)
        }
        let form: FormFields
        do {
            form = FormFields(encoded: try await request.bodyText(limit: Self.formLimit))
        } catch {
            return errorPage(domain, Self.notCompliant, now)
        }
        guard form[SignInPageIDs.Fields.adfsAuthMethod].map({ $0 == "FormsAuthentication" }) ?? true else {
            return errorPage(domain, "MSIS7102: Requested Authentication Method is not supported on the STS.", now)
        }
        guard let userName = form.nonEmpty(SignInPageIDs.Fields.adfsUserName), userName.utf8.count <= 256 else {
            return page(
                domain, action: action, userName: nil, error: "Enter your user ID in the format \"domain\\user\" or \"user@domain\".")
        }
        guard domain.contains(userName: userName) else {
            return page(
                domain, action: action, userName: userName, error: "Enter your user ID in the format \"user@\(domain.name)\".")
        }
        guard let password = form[SignInPageIDs.Fields.adfsPassword], !password.isEmpty else {
            return page(domain, action: action, userName: userName, error: "Enter your password.")
        }
        guard let user = users(of: domain)?.user(signInName: userName), user.checks(password: password),
            let immutableID = SAMLAssertion.immutableID(forUserID: user.id)
        else {
            return page(
                domain, action: action, userName: userName,
                error: "Incorrect user ID or password. Type the correct user ID and password, and try again.")
        }

        let assertion = SAMLAssertion(
            id: "_" + Identifiers.guid(), issuer: domain.issuerURI, issueInstant: now, notBefore: now,
            notOnOrAfter: now.addingTimeInterval(Self.assertionLifetime), audience: WSFederation.microsoftOnlineRealm,
            immutableID: immutableID, userPrincipalName: user.userPrincipalName, authenticationInstant: now)
        do {
            let wresult = try WSFederationResponse.signed(assertion, with: domain.signingKey)
            // The relying party trust's endpoint: Entra's, under its own name.
            return .html(ADFSPages.signedAnswer(to: root + FederationController.signInResponsePath, wresult: wresult, wctx: wctx))
        } catch {
            logger.error("AD FS could not sign an assertion: \(error)")
            return errorPage(domain, "The token could not be signed.", now)
        }
    }

    // MARK: Helpers

    /// AD FS's answer to a request that is not a WS-Federation sign-in it can read.
    private static let notCompliant =
        "MSIS7000: The sign in request is not compliant to the WS-Federation language for web browser clients or the SAML 2.0 "
        + "protocol WebSSO profile."

    /// The federated domain whose provider is served at the host the request came by.
    private func domain(for request: Request) -> FederatedDomain? {
        services.federatedDomains.first { $0.passiveEndpoint.host?.lowercased() == request.hostName }
    }

    /// The provider's users: its tenant's directory.
    private func users(of domain: FederatedDomain) -> Directory? {
        tenants.first { $0.id == domain.tenantID }.map(directory(for:))
    }

    private func page(_ domain: FederatedDomain, action: String, userName: String?, error: String?) -> Response {
        let demoUsers =
            configuration.demoMode
            ? DirectoryGenerator.contosoFixedUsers.map(\.userPrincipalName).filter { domain.contains(userName: $0) } : nil
        return .html(
            ADFSPages.signIn(action: action, organization: domain.displayName, userName: userName, error: error, demoUsers: demoUsers))
    }

    private func errorPage(_ domain: FederatedDomain, _ message: String, _ now: Date) -> Response {
        .html(
            ADFSPages.error(organization: domain.displayName, message: message, activityID: Identifiers.guid(), at: now),
            status: .badRequest)
    }

    /// What the identity provider's host answers for a path it does not serve (Entra's pages
    /// asked under its name).
    static func notFound(services: EmulatorServices) -> Response {
        let name = services.federatedDomains.first?.displayName ?? "Sign In"
        return .html(ADFSPages.notFound(organization: name), status: .notFound)
    }
}
