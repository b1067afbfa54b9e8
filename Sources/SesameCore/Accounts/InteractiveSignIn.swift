import FoundationEssentials

/// One interactive sign-in, stateless: the authorization request prepared
/// (fresh `state`, `nonce`, PKCE; `prompt=login` after a sign-out; a pending claims challenge;
/// the agent's redirect URI), shown by a ``SignInUserAgent``, its ending acted on — the code
/// redeemed and the id_token checked, B2C's "Forgot your password?" chained into the reset user
/// flow, a cancel, a hand-off to the browser — and the account stored.
enum InteractiveSignIn {
    /// How long after the sign-in page was asked for the provider's keys are fetched.
    static let prefetchDelay: Duration = .milliseconds(300)

    /// ``AccountStore/signIn(accountType:parameters:additionalScopes:using:)``: `stored` is the
    /// account type's configuration with the additional scopes.
    static func signIn(
        accountType: String, configuration stored: AccountConfiguration, parameters: [String: String],
        using userAgent: any SignInUserAgent, in context: AccountStoreContext
    ) async throws(AccountStoreError) -> Account {
        do throws(AccountStoreError) {
            let base = try await context.forTheWire(stored)
            if let account = try await signInWithDevice(
                accountType, configuration: base, parameters: parameters, refusalsThrow: false, in: context)
            {
                return account
            }
            var configuration = base
            while true {
                let session = try await begin(
                    accountType: accountType, configuration: configuration, parameters: parameters, in: userAgent, context: context)
                switch await session.ending() {
                case .answered(.code(let answer)):
                    // The agent goes as the code is redeemed (AppAuth dismisses on the redirect).
                    async let dismissed: Void = userAgent.dismiss(session)
                    let account: Account
                    do throws(AccountStoreError) {
                        account = try await redeem(answer, session: session, configuration: configuration, context: context)
                    } catch {
                        await dismissed
                        throw error
                    }
                    await dismissed
                    context.claims.answered(accountType)
                    return account
                case .answered(.error(let refusal)):
                    let error = AccountStoreError.from(refusal, accountType: accountType)
                    // B2C's seed: AADB2C90118 means "run the password-reset user flow, then go on",
                    // in the same agent.
                    if error.code == .passwordResetRequested, let reset = base.passwordResetPolicy,
                        configuration.policy?.lowercased() != reset.lowercased()
                    {
                        context.events.emit(.didFailToRequestAccess(accountType: accountType, error: error))
                        context.logger.info(
                            "password reset requested; starting the reset user flow", metadata: ["accountType": "\(accountType)"])
                        configuration = base.withPolicy(reset)
                        continue
                    }
                    await userAgent.dismiss(session)
                    throw error
                case .failed(let error):
                    await userAgent.dismiss(session)
                    throw error
                case .cancelled:
                    await userAgent.dismiss(session)
                    throw AccountStoreError(.cancelled, "Sign-in was cancelled.")
                case .handedOff:
                    await userAgent.dismiss(session)
                    throw AccountStoreError(.handedOffToBrowser, "The sign-in moved to the web browser.")
                }
            }
        } catch {
            var failure = error
            if failure.accountType == nil { failure.accountType = accountType }
            context.logger.notice("sign-in failed", metadata: ["accountType": "\(accountType)", "error": "\(failure)"])
            context.events.emit(.didFailToRequestAccess(accountType: accountType, error: failure))
            throw failure
        }
    }

    /// The sign-in by this computer's PRT (``DeviceSignIn``), when it has one that serves it: the
    /// account stored with no page. Nil: the page signs in. A policy's refusal is thrown when
    /// `refusalsThrow` (no page follows), else left to the page, which says it in its own words.
    static func signInWithDevice(
        _ accountType: String, configuration: AccountConfiguration, parameters: [String: String], refusalsThrow: Bool,
        in context: AccountStoreContext
    ) async throws(AccountStoreError) -> Account? {
        guard let device = context.device else { return nil }
        let (parameters, asksForAccount) = deviceParameters(accountType, configuration: configuration, parameters, in: context)
        switch await DeviceSignIn(device: device, verifier: context.verifier, logger: context.logger).attempt(
            accountType: accountType, configuration: configuration, parameters: parameters, asksForAccount: asksForAccount,
            now: context.now())
        {
        case .signedIn(let tokens, let claims, let deviceID):
            let account = try SignedInAccounts.save(
                tokens, claims: claims, clientInfo: tokens.clientInfo.flatMap(ClientInfo.init(encoded:)), configuration: configuration,
                accountType: accountType, source: "primary_refresh_token", in: context)
            context.events.emit(.signedInWithDevice(accountType: accountType, deviceID: deviceID))
            return account
        case .deviceLost(let error):
            context.events.emit(.deviceLost(error))
            return nil
        case .refused(let refusal):
            guard refusalsThrow else { return nil }
            context.events.emit(.didFailToRequestAccess(accountType: accountType, error: refusal))
            throw refusal
        case .notApplicable:
            return nil
        }
    }

    /// The registration whose PRT ``signInWithDevice(_:configuration:parameters:refusalsThrow:in:)``
    /// would try, checked as it checks (nothing sent); nil: only a page signs in.
    static func deviceUser(
        _ accountType: String, configuration: AccountConfiguration, parameters: [String: String], in context: AccountStoreContext
    ) async -> DeviceIdentity.Status? {
        guard let device = context.device else { return nil }
        let (parameters, asksForAccount) = deviceParameters(accountType, configuration: configuration, parameters, in: context)
        return await DeviceSignIn(device: device, verifier: context.verifier, logger: context.logger).applicable(
            configuration: configuration, parameters: parameters, asksForAccount: asksForAccount)
    }

    /// The PRT's sign-in's parameters (a pending claims challenge added) and whether the group's
    /// next sign-in asks who signs in.
    private static func deviceParameters(
        _ accountType: String, configuration: AccountConfiguration, _ parameters: [String: String], in context: AccountStoreContext
    ) -> ([String: String], Bool) {
        var parameters = parameters
        if parameters["claims"] == nil, let claims = context.claims.challenge(for: accountType) { parameters["claims"] = claims }
        return (parameters, (try? SignedInAccounts.nextPrompt(group: configuration.storageGroup, in: context)) != nil)
    }

    /// Prepares one session (`prompt=login` after a sign-out, a pending claims challenge, the
    /// agent's redirect URI) and has the agent show it.
    private static func begin(
        accountType: String, configuration: AccountConfiguration, parameters: [String: String], in userAgent: any SignInUserAgent,
        context: AccountStoreContext
    ) async throws(AccountStoreError) -> SignInSession {
        var parameters = parameters
        if parameters["prompt"] == nil, let prompt = try? SignedInAccounts.nextPrompt(group: configuration.storageGroup, in: context) {
            parameters["prompt"] = prompt
        }
        if parameters["claims"] == nil, let claims = context.claims.challenge(for: accountType) {
            parameters["claims"] = claims
        }
        var configuration = configuration
        do {
            configuration.redirectURL = try await userAgent.redirectURI(for: configuration)
        } catch {
            throw AccountStoreError(.userAgentUnavailable, "The sign-in cannot receive its answer: \(error)")
        }
        let request = AuthorizationRequest(configuration: configuration, additionalParameters: parameters)
        let session = SignInSession(accountType: accountType, configuration: configuration, request: request)
        context.logger.info(
            "sign-in started", metadata: ["accountType": "\(accountType)", "url": "\(session.authorizationURL.redactingQuery)"])
        // The provider's keys are fetched while the user is at the pages, off the path from the
        // redirect to the user's data — and off the path to the first page: a moment after it
        // was asked for, once the agent's engine has started (the first request's proxy lookup
        // loads the desktop's proxy libraries, a PAC runner among them). Counted from here, not
        // from `present`'s return: an agent may stay in `present` while the user is at the pages.
        var prefetch: Task<Void, any Error>?
        if configuration.scopes.contains("openid") {
            prefetch = Task.detached { [verifier = context.verifier, now = context.now] in
                try await Task.sleep(for: prefetchDelay)
                await verifier.metadata.prefetch(discoveryURL: configuration.resolvedDiscoveryURL, now: now())
            }
        }
        do {
            try await userAgent.present(session)
        } catch {
            prefetch?.cancel()
            await userAgent.dismiss(session)
            throw AccountStoreError(.userAgentUnavailable, "The sign-in page could not be shown: \(error)")
        }
        return session
    }

    /// The code redeemed (with the session's PKCE verifier), the id_token checked against the
    /// session's nonce, the account stored.
    private static func redeem(
        _ answer: AuthorizationCodeResponse, session: SignInSession, configuration: AccountConfiguration, context: AccountStoreContext
    ) async throws(AccountStoreError) -> Account {
        let accountType = session.accountType
        let request = AuthorizationCodeRequest(code: answer.code, answering: session.request)
        let tokens = try await context.tokenEndpoint.send(request, configuration: configuration, accountType: accountType)
        let claims: IDTokenClaims?
        do {
            claims = try await context.verifier.claims(
                of: tokens.idToken, configuration: configuration, expectedNonce: session.request.nonce.revealed,
                required: configuration.scopes.contains("openid"), now: context.now())
            if let idToken = tokens.idToken {
                context.events.emit(
                    .idTokenChecked(accountType: accountType, checks: IDTokenCheck.allPassed(idToken: idToken, nonceChecked: true)))
            }
        } catch {
            if let failure = error.idTokenFailure, let idToken = tokens.idToken {
                context.events.emit(
                    .idTokenChecked(
                        accountType: accountType, checks: IDTokenCheck.refused(by: failure, idToken: idToken, nonceChecked: true)))
            }
            throw error
        }
        let clientInfo = (tokens.clientInfo ?? answer.clientInfo).flatMap(ClientInfo.init(encoded:))
        return try SignedInAccounts.save(
            tokens, claims: claims, clientInfo: clientInfo, configuration: configuration, accountType: accountType,
            source: "authorization_code", in: context)
    }
}
