import Foundation
import SesameCore
import SesameCoreTestSupport
import SesameSamples
import SesameTestSupport
import Testing

@MainActor
@Suite("Which program may use which account (no bus)")
struct ProgramAccessTests {
    static let git = ProgramIdentity.executable("/usr/local/bin/git-credential-sesame")!
    static let copy = ProgramIdentity.executable("/tmp/elsewhere/git-credential-sesame")!

    static func request(_ program: ProgramIdentity = git, scopes: [String] = ["User.Read"]) -> AccessRequest {
        AccessRequest(
            program: program, accountType: "myGraphService", homeAccountID: "uid.utid", username: "alex@contoso.com", scopes: scopes)
    }

    @Test("a program is identified by its path or app id; anything else is no identity")
    func identities() {
        #expect(ProgramIdentity.executable("relative/tool") == nil)
        #expect(ProgramIdentity.executable("/bin/a\u{0}b") == nil)
        #expect(ProgramIdentity.executable("/" + String(repeating: "a", count: 5000)) == nil)
        #expect(ProgramIdentity.flatpak("org.gnome.Evolution")?.name == "org.gnome.Evolution")
        #expect(ProgramIdentity.flatpak("org.gnome.Evolution; rm -rf") == nil)
        #expect(ProgramIdentity.flatpak("nodots") == nil)
        #expect(Self.git.name == "git-credential-sesame")
        #expect(Self.git.origin == "/usr/local/bin")
        #expect(Self.git != Self.copy, "two paths of one name are two programs")
    }

    @Test("Always and Deny are kept per program, account and scopes; Allow once is not; the scopes' order does not matter")
    func decisions() {
        let access = ProgramAccess(file: nil)
        #expect(access.decision(for: Self.request()) == nil)
        access.record(.allowOnce, for: Self.request())
        #expect(access.decision(for: Self.request()) == nil)
        access.record(.always, for: Self.request(scopes: ["User.Read", "Mail.Read"]))
        #expect(access.decision(for: Self.request(scopes: ["mail.read", "user.read"])) == true)
        #expect(access.decision(for: Self.request(scopes: ["User.Read"])) == nil, "other scopes are another question")
        #expect(access.decision(for: Self.request(Self.copy, scopes: ["User.Read", "Mail.Read"])) == nil, "another path, another question")
        access.record(.deny, for: Self.request(Self.copy))
        #expect(access.decision(for: Self.request(Self.copy)) == false)
        #expect(access.all.count == 2)
    }

    @Test("a revoked decision asks again; a signed-out account's decisions go")
    func revoking() throws {
        let access = ProgramAccess(file: nil)
        var changes = 0
        access.observe { changes += 1 }
        access.record(.always, for: Self.request())
        access.record(.deny, for: Self.request(Self.copy))
        let kept = try #require(access.all.first { $0.program == Self.git })
        access.revoke(kept)
        #expect(access.decision(for: Self.request()) == nil)
        #expect(access.mayManage(Self.git, accountType: "myGraphService", homeAccountID: "uid.utid") == false)
        access.forget(accountType: "myGraphService", homeAccountID: "uid.utid")
        #expect(access.all.isEmpty)
        #expect(changes == 4)
    }

    @Test("decisions survive a restart in an owner-only file")
    func keptInAFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "sesame/program-access.json")
        ProgramAccess(file: file).record(.always, for: Self.request())
        let again = ProgramAccess(file: file)
        #expect(again.decision(for: Self.request()) == true)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test("a hostile file is no decision: malformed, oversized, a link, odd entries dropped one by one")
    func hostileFile() throws {
        let folder = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appending(path: "program-access.json")
        for text in ["", "{", "[]", #"{"version": 2, "decisions": []}"#, String(repeating: " ", count: ProgramAccess.maximumFileSize + 1)] {
            try Data(text.utf8).write(to: file)
            #expect(ProgramAccess(file: file).all.isEmpty)
        }
        let good =
            #"{"program": {"kind": "executable", "id": "/usr/bin/tool"}, "accountType": "t", "homeAccountID": "h", "#
            + #""username": "u", "scopes": ["user.read"], "allowed": true, "decidedAt": "2025-01-01T00:00:00Z"}"#
        let entries = [
            good,
            #"{"program": {"kind": "executable", "id": "relative"}, "accountType": "t", "homeAccountID": "h", "username": "u", "scopes": [], "allowed": true, "decidedAt": "2025-01-01T00:00:00Z"}"#,
            #"{"program": {"kind": "flatpak", "id": "x"}, "accountType": "t", "homeAccountID": "h", "username": "u", "scopes": [], "allowed": true, "decidedAt": "2025-01-01T00:00:00Z"}"#,
            #"{"program": {"kind": "executable", "id": "/usr/bin/tool"}, "accountType": "t", "homeAccountID": "h", "username": "u", "scopes": ["B", "a"], "allowed": true, "decidedAt": "2025-01-01T00:00:00Z"}"#,
            #"{"allowed": "yes"}"#, "42",
        ]
        try Data(#"{"version": 1, "decisions": [\#(entries.joined(separator: ","))]}"#.utf8).write(to: file)
        let read = ProgramAccess(file: file)
        #expect(read.all.count == 1, "\(read.all)")
        let tool = try #require(ProgramIdentity.executable("/usr/bin/tool"))
        #expect(
            read.decision(for: AccessRequest(program: tool, accountType: "t", homeAccountID: "h", username: "u", scopes: ["User.Read"]))
                == true)
        // A link to a file of decisions is not followed.
        let link = folder.appending(path: "link.json")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(ProgramAccess(file: link).all.isEmpty)
    }
}

/// The questions a test answers: each answer in turn, counting what was asked.
@MainActor
final class ScriptedQuestions: AccessQuestioner {
    var answers: [AccessAnswer?]
    private(set) var asked: [AccessRequest] = []
    /// Holds every question until released (so that concurrent requests pile up on it).
    var holding = false

    init(_ answers: [AccessAnswer?]) { self.answers = answers }

    func ask(_ request: AccessRequest) async -> AccessAnswer? {
        asked.append(request)
        while holding { await Task.yield() }
        return answers.isEmpty ? nil : answers.removeFirst()
    }
}

@MainActor
@Suite("The account service's decisions (no bus)")
struct AccountServiceTests {
    static let tool = ProgramIdentity.executable("/opt/a/tool")!
    static let sameName = ProgramIdentity.executable("/opt/b/tool")!
    static let sesame = ProgramIdentity.executable("/usr/bin/sesame")!

    static func signedIn() async throws -> (SamplesFixture, AccountService) {
        let fixture = try await SamplesFixture()
        _ = await fixture.session(.directory).signIn()
        let service = AccountService(model: fixture.model, access: ProgramAccess(file: nil), trusted: [sesame])
        return (fixture, service)
    }

    @Test("accounts are listed with their type, user name, display name and tenant, never a token")
    func listing() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let accounts = try await service.accounts()
        #expect(accounts.count == 1)
        #expect(accounts.first?.accountType == "myGraphService")
        #expect(accounts.first?.username == fixture.provider.username)
        #expect(String(describing: accounts).contains("eyJ") == false)
    }

    @Test("the first request asks; Allow once gives a token and asks again next time; Always does not")
    func firstRequestAsks() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions([.allowOnce, .always])
        service.questioner = questions
        let first = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(!first.secret.revealed.isEmpty)
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(questions.asked.count == 2)
        #expect(questions.asked.first?.scopes == ["user.read", "user.readbasic.all"], "the question names the type's own scopes")
    }

    @Test("Deny, no answer and no window are an AccessDenied error; a revoked decision asks again; another path is asked about separately")
    func denied() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        await #expect(throws: AccountServiceError.self) {
            try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        }
        let questions = ScriptedQuestions([.deny, .always, nil])
        service.questioner = questions
        for _ in 0..<2 {
            do {
                _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
                Issue.record("a denied program got a token")
            } catch {
                #expect(error.kind == .accessDenied)
                #expect(error.name == "org.sesame.Accounts1.Error.AccessDenied")
            }
        }
        #expect(questions.asked.count == 1, "Deny is kept")
        service.access.revoke(try #require(service.access.all.first))
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        #expect(questions.asked.count == 2)
        await #expect(throws: AccountServiceError.self) {
            try await service.accessToken(for: Self.sameName, accountType: "myGraphService", username: "", scopes: [])
        }
        #expect(questions.asked.count == 3)
        #expect(questions.asked.last?.program == Self.sameName)
    }

    @Test("Sesame's own commands are not asked; bad arguments are InvalidArgument, unknown ones typed errors")
    func trustedAndArguments() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        _ = try await service.accessToken(for: Self.sesame, accountType: "myGraphService", username: "", scopes: [])
        let cases: [(String, String, [String], AccountServiceError.Kind)] = [
            ("", "", [], .invalidArgument),
            (String(repeating: "x", count: 600), "", [], .invalidArgument),
            ("myGraphService", "a\u{7}b", [], .invalidArgument),
            ("myGraphService", "", ["has space"], .invalidArgument),
            ("myGraphService", "", Array(repeating: "s", count: 40), .invalidArgument),
            ("noSuchType", "", [], .unknownAccountType),
            ("myGraphService", "nobody@contoso.com", [], .noSuchAccount),
            ("B2C_Acccount", "", [], .noSuchAccount),
        ]
        for (accountType, username, scopes, kind) in cases {
            do {
                _ = try await service.accessToken(for: Self.sesame, accountType: accountType, username: username, scopes: scopes)
                Issue.record("no error for \(accountType.prefix(20)) \(username) \(scopes.prefix(2))")
            } catch {
                #expect(error.kind == kind, "\(error)")
            }
        }
    }

    @Test("concurrent requests from several programs: one question each, one refresh for all")
    func concurrentRequestsShareOneRefresh() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let programs = (1...4).map { ProgramIdentity.executable("/opt/p\($0)/tool")! }
        let questions = ScriptedQuestions(Array(repeating: .always, count: programs.count))
        questions.holding = true
        service.questioner = questions
        // The token endpoint answers the scopes granted, as Entra does: a caller that comes after
        // the refresh has ended finds its token in the cache instead of redeeming again.
        fixture.provider.echoesScope = true
        fixture.provider.clock.advance(by: 3600)
        let before = fixture.provider.refreshCount
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for program in programs {
                for _ in 0..<5 {
                    group.addTask {
                        try await service.accessToken(for: program, accountType: "myGraphService", username: "", scopes: []).secret.revealed
                    }
                }
            }
            try await until { questions.asked.count == programs.count }
            questions.holding = false
            var all: [String] = []
            for try await token in group { all.append(token) }
            return all
        }
        #expect(tokens.count == 20)
        #expect(Set(tokens).count == 1)
        #expect(fixture.provider.refreshCount - before == 1)
        #expect(questions.asked.count == programs.count, "one question per program")
    }

    @Test("a program allowed always may sign the account out; one never allowed may not")
    func signingOut() async throws {
        let (fixture, service) = try await Self.signedIn()
        defer { fixture.remove() }
        let questions = ScriptedQuestions([.always])
        service.questioner = questions
        await #expect(throws: AccountServiceError.self) {
            try await service.signOut(for: Self.tool, accountType: "myGraphService", username: "")
        }
        _ = try await service.accessToken(for: Self.tool, accountType: "myGraphService", username: "", scopes: [])
        try await service.signOut(for: Self.tool, accountType: "myGraphService", username: "")
        #expect(try await service.accounts().isEmpty)
        withExtendedLifetime(questions) {}
    }
}
