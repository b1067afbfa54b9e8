import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameService
import Testing

@testable import SesameSamples
@testable import SesameWindowModel

/// What a person reads when the tenant refused: the sentence, the one action, and the help desk's
/// details — from an error description, a refusal page, or a D-Bus reply; never a secret.
@Suite("The tenant's refusals: sentence, action, help desk details")
struct RefusalNoticeTests {
    static let description =
        "AADSTS53003: Access has been blocked by Conditional Access policies.\r\nTrace ID: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b\r\n"
        + "Correlation ID: 11111111-2222-3333-4444-555555555555\r\nTimestamp: 2026-11-25 10:00:00Z"

    static let configuration = AccountConfiguration(
        clientID: "6731de76-14a6-49ae-97bc-6eba6914391e", scopes: ["openid", "User.Read"],
        authorizationURL: URL(string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/authorize")!,
        tokenURL: URL(string: "https://login.microsoftonline.com/contoso.onmicrosoft.com/oauth2/v2.0/token")!,
        redirectURL: URL(string: "https://login.microsoftonline.com/common/oauth2/nativeclient")!, storageGroup: "test")

    static func error(_ code: String, description: String = description) -> AccountStoreError {
        var error = AccountStoreError(.interactionRequired, "refused")
        error.serviceCode = code
        error.errorDescription = description
        return error
    }

    @Test("each refusal gets its action: the approval link, the browser, the registration page, the doctor, time, the help desk")
    func actions() throws {
        func action(_ code: String) -> RefusalNotice.Action? { RefusalNotice(Self.error(code), configuration: Self.configuration)?.action }
        guard case .approvalLink(let link)? = action("AADSTS90094") else {
            Issue.record("no approval link for 90094")
            return
        }
        #expect(link.path == "/contoso.onmicrosoft.com/v2.0/adminconsent")
        #expect(action("AADSTS530003") == .continueInBrowser)
        #expect(action("AADSTS53000") == .continueInBrowser)
        #expect(action("AADSTS50079") == .register(URL(string: "https://aka.ms/mfasetup")!))
        #expect(action("AADSTS50053") == .tryAgainLater)
        #expect(action("AADSTS700016") == .runDoctor)
        #expect(action("AADSTS53003") == .contactHelpDesk)
        #expect(action("AADSTS50057") == .contactHelpDesk)
        #expect(action("AADSTS50097") == .registerDevice)
        #expect(RefusalNotice(Self.error("AADSTS70008"), configuration: Self.configuration) == nil, "an expired code is no refusal")
        let codes = [
            "AADSTS53003", "AADSTS530003", "AADSTS50076", "AADSTS50079", "AADSTS65001", "AADSTS90094", "AADSTS90095", "AADSTS50053",
            "AADSTS50057", "AADSTS50055", "AADSTS700016", "AADSTS50020", "AADSTS50011", "AADSTS7000218", "AADSTS50097",
        ]
        let strength = TenantRefusal(serviceCode: "AADSTS53003", strength: .phishingResistantMfa)
        #expect(Set(codes.compactMap { TenantRefusal(serviceCode: $0) } + [strength].compactMap { $0 }) == Set(TenantRefusal.allCases))
        for code in codes { #expect(UserMessage.serviceSentence(for: code) != nil, "no sentence for \(code)") }
    }

    @Test("the details: the service's ids, the app and the tenant, one a line")
    func details() throws {
        let notice = try #require(RefusalNotice(Self.error("AADSTS53003"), configuration: Self.configuration))
        #expect(
            notice.details.text == """
                Error code: AADSTS53003
                Request Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b
                Correlation Id: 11111111-2222-3333-4444-555555555555
                Timestamp: 2026-11-25 10:00:00Z
                App id: 6731de76-14a6-49ae-97bc-6eba6914391e
                Tenant: contoso.onmicrosoft.com
                """)
    }

    @Test("a hostile page's text: only fields shaped like ids, codes and times are kept, bounded")
    func hostilePage() {
        let page = """
            Error Code: 53003<script>
            Request Id: eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln
            Correlation Id: 11111111-2222-3333-4444-555555555555
            Timestamp: now; rm -rf /
            App id: \(String(repeating: "a", count: 5000))
            Password: Passw0rd!
            """
        let details = HelpDeskDetails(troubleshooting: page + String(repeating: "x", count: 100_000))
        #expect(details.errorCode == nil, "a code with markup after it")
        #expect(details.requestID == nil, "a token is no request id")
        #expect(details.correlationID == "11111111-2222-3333-4444-555555555555")
        #expect(details.timestamp == nil)
        #expect(details.appID == nil)
        #expect(!details.text.contains("Passw0rd") && !details.text.contains("eyJ"))
        let page2 = HelpDeskDetails(troubleshooting: "Error Code: 530003\nRequest Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b")
        #expect(page2.errorCode == "AADSTS530003")
        let notice = RefusalNotice(page: page2, authorizationURL: Self.configuration.authorizationURL)
        #expect(notice?.action == .continueInBrowser)
        #expect(notice?.details.tenant == "contoso.onmicrosoft.com")
    }

    @Test("the latest refusal is kept for sesame doctor: the details, never more")
    func latest() throws {
        let state = FileManager.default.temporaryDirectory.appending(path: "refusal-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: state) }
        let environment = ["XDG_STATE_HOME": state.path, "HOME": state.path]
        #expect(RefusalNotice.latest(environment: environment) == nil)
        let notice = try #require(RefusalNotice(Self.error("AADSTS50057"), configuration: Self.configuration))
        notice.record(environment: environment)
        let kept = try #require(RefusalNotice.latest(environment: environment))
        #expect(kept.contains("Error code: AADSTS50057"))
        #expect(kept.contains("Request Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"))
        #expect(kept.hasPrefix("Recorded: "))
    }
}

/// The account service's reply to a program when the tenant refused the token: Sesame's sentence
/// and the ids its user can hand the help desk — for a program allowed to see the account.
@MainActor
@Suite("The account service's refusals")
struct AccountServiceRefusalTests {
    @Test("a Conditional Access block reaches an allowed program as the sentence and the request's ids")
    func blockedRefresh() async throws {
        let fixture = try await SamplesFixture()
        defer { fixture.remove() }
        // A token valid for 1 s has less left than the store asks of one it hands out
        // (AccountStore.minimumRemainingValidity): each request is a refresh.
        fixture.provider.expiresIn = 1
        _ = await fixture.session(.directory).signIn()
        let tool = ProgramIdentity.executable("/opt/a/tool")!
        let service = AccountService(
            store: fixture.model.store, accountTypes: fixture.model.samples.map(\.accountType), trace: fixture.trace,
            access: ProgramAccess(file: nil), trusted: [])
        let questions = ScriptedQuestions([.always])
        service.questioner = questions
        _ = try await service.accessToken(for: tool, accountType: "myGraphService", username: "", scopes: [])
        fixture.provider.refreshError = [
            "error": "invalid_grant", "error_codes": [53003], "suberror": "message_only",
            "error_description": RefusalNoticeTests.description,
        ]
        do {
            _ = try await service.accessToken(for: tool, accountType: "myGraphService", username: "", scopes: [])
            Issue.record("a refused refresh gave a token")
        } catch {
            #expect(error.kind == .interactionRequired)
            #expect(error.message.contains("Your organization's access policy blocks this sign-in."), "\(error.message)")
            #expect(error.message.contains("AADSTS53003"), "\(error.message)")
            #expect(error.message.contains("\nRequest Id: 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"), "\(error.message)")
            #expect(error.message.contains("\nCorrelation Id: 11111111-2222-3333-4444-555555555555"), "\(error.message)")
            // `sesame token` reads the details back, as the help desk block it prints itself.
            let read = try #require(RefusalMessage(text: error.message))
            #expect(read.details.errorCode == "AADSTS53003")
            #expect(read.details.requestID == "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b")
            #expect(read.sentence.hasPrefix("Your organization's access policy blocks this sign-in."))
            #expect(RefusalMessage(text: "The user did not allow this program to use that account.") == nil)
        }
        withExtendedLifetime(questions) {}
    }
}
