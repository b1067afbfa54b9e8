import FoundationEssentials
import SesameCore
import SesameService
import SesameSystem
import SesameWindowModel

/// The MSAL sample without its widgets: "Call Microsoft Graph" gets a token silently when an
/// account is cached and interactively otherwise (and again when the service requires
/// interaction), calls `/me`, and writes each step to a log. Tokens show masked. For any other
/// OpenID provider the console calls the provider's userinfo endpoint (from discovery) instead.
@MainActor
public final class MeConsole {
    /// The log, a line per step.
    public private(set) var lines: [String] = []
    /// Called with each new line.
    public var onLine: ((String) -> Void)?

    /// Who is signed in for the sample.
    public let session: SampleSession
    /// The resource to read: `graphURI`, or (`nil`) the provider's userinfo endpoint.
    private let graphURI: URL?

    /// The console of the MSAL sample (`graphURI` of its settings), or of another OpenID provider.
    public init(session: SampleSession) {
        self.session = session
        switch session.sample.settings {
        case .msal(let msal): graphURI = msal.graphURI
        case .openID: graphURI = nil
        default: graphURI = URL(string: "https://graph.microsoft.com/v1.0/me")!
        }
    }

    /// What the console's button says.
    public var actionTitle: String { graphURI == nil ? L("Call the userinfo endpoint") : L("Call Microsoft Graph") }

    /// The resource: the settings' URI, or the provider's `userinfo_endpoint`.
    private func resource() async throws -> URL {
        if let graphURI { return graphURI }
        let provider = try await session.httpClient.store.providerConfiguration(forAccountType: session.sample.accountType)
        guard let userinfo = provider.userinfoEndpoint else { throw NoUserInfo() }
        return userinfo
    }

    private struct NoUserInfo: UserFacingError {
        var userMessage: String { L("The identity provider publishes no userinfo endpoint.") }
    }

    /// What the page shows before the first call: who would call, and the call itself as its one
    /// action; nil once the log has a line.
    public var pageStatus: PageStatus? {
        if let blocked = session.storageStatus { return blocked }
        guard lines.isEmpty else { return nil }
        guard let account = session.account else {
            return PageStatus(
                .signedOut,
                title: graphURI == nil ? L("Read your profile from your identity provider") : L("Read your profile from Microsoft Graph"),
                description: L("Sesame signs you in, calls the API with your token and shows each step here."), action: .call(actionTitle))
        }
        return PageStatus(
            .nothingYet, title: String(formatting: L("Signed in as %@"), DisplayText.isolated(account.displayName)),
            description: L("Your sign-in is kept: the call gets a token without asking you again."), action: .call(actionTitle))
    }

    /// Whether an account is cached (sign-out is possible).
    public var canSignOut: Bool { session.account != nil }

    /// The page came into view: find the cached account, without interaction.
    public func appear() async {
        await session.restore()
    }

    /// The MSAL sample's logic: silent when an account is cached, interactive otherwise or when
    /// the service says interaction is required; then `GET /me`.
    public func callGraph() async {
        do {
            let token: AccessToken
            if let account = await session.restore() {
                do {
                    token = try await session.httpClient.store.accessToken(for: account)
                    session.recordSilentToken()
                    write("acquireTokenSilent: \(token.secret.masked)")
                } catch let error as AccountStoreError where error.code == .interactionRequired {
                    write(String(formatting: L("interaction required: %@"), UserMessage.text(for: error)))
                    token = try await interactive()
                }
            } else {
                token = try await interactive()
            }
            session.use(token.account)
            let url = try await resource()
            let response = try await session.httpClient.perform(ResourceRequest(url: url), as: token.account)
            write("GET \(url.absoluteString) → \(response.status)")
            write(Self.pretty(response.body))
        } catch {
            write(String(formatting: L("error: %@"), session.message(for: error)))
        }
    }

    /// Signs out (MSAL's `remove(account)`).
    public func signOut() async {
        do {
            try await session.signOut()
            write(L("signed out"))
        } catch {
            write(String(formatting: L("error: %@"), String(formatting: L("Could not sign out: %@"), UserMessage.text(for: error))))
        }
    }

    /// Stops updating (the window is closing).
    public func close() {
        onLine = nil
    }

    /// The /me answer as indented JSON (the body as text when it is not JSON).
    public static func pretty(_ body: Data) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let object = try? JSONDecoder().decode(JSONValue.self, from: body), let data = try? encoder.encode(object) else {
            return String(decoding: body, as: UTF8.self)
        }
        return String(decoding: data, as: UTF8.self)
    }

    private struct SignInClosed: UserFacingError {
        var userMessage: String { L("Sign-in was cancelled.") }
    }

    private func interactive() async throws -> AccessToken {
        write("acquireToken (interactive)")
        session.forget()
        guard let account = await session.signIn() else { throw SignInClosed() }
        let token = try await session.httpClient.store.accessToken(for: account)
        write("token: \(token.secret.masked)")
        return token
    }

    private func write(_ line: String) {
        lines.append(line)
        onLine?(line)
    }
}
