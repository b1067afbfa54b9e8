import Foundation
import SesameCoreTestSupport
import Testing

@testable import SesameCore

@Suite("Graph user directory")
struct GraphTests {
    let base = URL(string: "https://graph.microsoft.com/v1.0/")!

    @Test("the seed's filter and the people picker; quotes are doubled")
    func filters() {
        #expect(GraphUserDirectory.filter(for: "meg", mode: .givenName) == "startswith(givenName,'meg')")
        #expect(GraphUserDirectory.filter(for: "O'Brien", mode: .givenName) == "startswith(givenName,'O''Brien')")
        #expect(
            GraphUserDirectory.filter(for: " al ", mode: .peoplePicker)
                == "startswith(displayName,'al') or startswith(givenName,'al') or startswith(surname,'al') or startswith(mail,'al') "
                + "or startswith(userPrincipalName,'al')"
        )
        #expect(GraphUserDirectory.filter(for: "  ", mode: .peoplePicker) == nil)
    }

    @Test("a search sends $filter, $select and $top as parameters and reads the page")
    func search() async throws {
        let resource = try await ResourceFixture { _ in
            json([
                "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#users",
                "@odata.nextLink": "https://graph.microsoft.com/v1.0/users?$filter=x&$top=2&$skiptoken=RFNwdAIAAQAAA",
                "value": [
                    [
                        "id": "1", "displayName": "Megan Bowen", "userPrincipalName": "megan@contoso.com", "mail": "megan@contoso.com",
                        "businessPhones": ["+1 412 555 0109"], "mobilePhone": NSNull(),
                    ],
                    [
                        "id": "2", "displayName": "Ciarán O'Brien", "userPrincipalName": "ciaran@contoso.com", "mail": NSNull(),
                        "businessPhones": [],
                    ],
                ],
            ])
        }
        defer { resource.fixture.remove() }
        let directory = GraphUserDirectory(client: resource.client, account: resource.account, baseURL: base)
        let page = try await directory.search("O'Brien", mode: .givenName, pageSize: 2)
        let sent = try #require(resource.resourceRequests.first)
        #expect(sent.url.path == "/v1.0/users")
        #expect(sent.query["$filter"] == "startswith(givenName,'O''Brien')")
        #expect(sent.query["$select"] == "id,displayName,givenName,surname,userPrincipalName,mail,businessPhones,mobilePhone")
        #expect(sent.query["$top"] == "2")
        #expect(page.users.map(\.displayName) == ["Megan Bowen", "Ciarán O'Brien"])
        #expect(page.users[0].businessPhones == ["+1 412 555 0109"])
        #expect(page.users[1].mail == nil)
        #expect(page.nextLink?.absoluteString.hasSuffix("$skiptoken=RFNwdAIAAQAAA") == true)
    }

    @Test("the next page follows @odata.nextLink verbatim and the last page has none")
    func paging() async throws {
        let next = "https://graph.microsoft.com/v1.0/users?$filter=startswith(givenName,'a')&$top=1&$skiptoken=X%2BY"
        let resource = try await ResourceFixture { request in
            request.url.query?.contains("skiptoken") == true
                ? json(["value": [["id": "2", "displayName": "B"]]])
                : json(["value": [["id": "1", "displayName": "A"]], "@odata.nextLink": next])
        }
        defer { resource.fixture.remove() }
        let directory = GraphUserDirectory(client: resource.client, account: resource.account, baseURL: base)
        let first = try await directory.search("a", pageSize: 1)
        let second = try #require(try await directory.nextPage(after: first))
        #expect(resource.resourceRequests[1].url.absoluteString == next)
        #expect(second.users.map(\.id) == ["2"])
        #expect(second.nextLink == nil)
        #expect(try await directory.nextPage(after: second) == nil)
    }

    @Test(
        "a nextLink to another origin is not followed: no request, and the bearer token goes nowhere else",
        arguments: [
            "https://graph.microsoft.com.evil.example/v1.0/users?$skiptoken=X", "http://graph.microsoft.com/v1.0/users?$skiptoken=X",
            "https://graph.microsoft.com:8443/v1.0/users?$skiptoken=X", "https://evil.example/steal",
        ])
    func foreignNextLink(next: String) async throws {
        let resource = try await ResourceFixture { _ in json(["value": [["id": "1", "displayName": "A"]], "@odata.nextLink": next]) }
        defer { resource.fixture.remove() }
        let directory = GraphUserDirectory(client: resource.client, account: resource.account, baseURL: base)
        let first = try await directory.search("a", pageSize: 1)
        await #expect(throws: GraphError.self) { _ = try await directory.nextPage(after: first) }
        #expect(resource.resourceRequests.count == 1)
        #expect(GraphUserDirectory.origin(of: URL(string: "HTTPS://Graph.Microsoft.com/v1.0")!) == "https://graph.microsoft.com:443")
    }

    @Test("Graph's error JSON becomes a typed error")
    func graphError() async throws {
        let resource = try await ResourceFixture { _ in
            json(
                [
                    "error": [
                        "code": "Request_UnsupportedQuery", "message": "Unsupported property filter clause operator 'Contains'.",
                        "innerError": ["date": "2026-01-01T00:00:00", "request-id": "9f3c"],
                    ]
                ], status: 400)
        }
        defer { resource.fixture.remove() }
        let directory = GraphUserDirectory(client: resource.client, account: resource.account, baseURL: base)
        await #expect { try await directory.search("x") } throws: { error in
            guard let error = error as? GraphError else { return false }
            return error.status == 400 && error.code == "Request_UnsupportedQuery" && error.requestID == "9f3c"
                && error.description.contains("Unsupported property filter clause operator")
        }
    }

    @Test("/me is read")
    func me() async throws {
        let resource = try await ResourceFixture { request in
            request.url.path == "/v1.0/me"
                ? json(["id": "o", "displayName": "Alex Wilber", "userPrincipalName": "alex@contoso.com"]) : HTTPResponse(status: 404)
        }
        defer { resource.fixture.remove() }
        let me = try await GraphUserDirectory(client: resource.client, account: resource.account, baseURL: base).me()
        #expect(me.displayName == "Alex Wilber")
    }
}

@Suite("B2C task API")
struct TaskServiceTests {
    let base = URL(string: "https://tasks.example")!

    @Test("GET /api/tasks lists the account's tasks")
    func list() async throws {
        let resource = try await ResourceFixture { _ in
            json([["Id": 1, "Owner": "oid", "Text": "Buy milk", "Completed": false, "DateModified": "2026-01-01T00:00:00"]])
        }
        defer { resource.fixture.remove() }
        let tasks = try await TaskService(client: resource.client, account: resource.account, baseURL: base).tasks()
        #expect(tasks.map(\.text) == ["Buy milk"])
        #expect(tasks.first?.id == "1")
        #expect(resource.resourceRequests.first?.url.absoluteString == "https://tasks.example/api/tasks")
    }

    @Test("POST /api/tasks sends {\"Text\": …}")
    func add() async throws {
        let resource = try await ResourceFixture { _ in HTTPResponse(status: 204) }
        defer { resource.fixture.remove() }
        try await TaskService(client: resource.client, account: resource.account, baseURL: base).add("Call Kim")
        let sent = try #require(resource.resourceRequests.first)
        #expect(sent.method == "POST")
        #expect(String(decoding: sent.body!, as: UTF8.self) == #"{"Text":"Call Kim"}"#)
    }

    @Test("an empty task is refused before sending; the API's 401 reason is shown")
    func errors() async throws {
        let resource = try await ResourceFixture { _ in
            HTTPResponse(status: 401, reasonPhrase: "The Scope claim does not contain the write permission.")
        }
        defer { resource.fixture.remove() }
        let service = TaskService(client: resource.client, account: resource.account, baseURL: base)
        await #expect(throws: TaskServiceError(status: 0, reason: "Type a task description first.")) { try await service.add("   ") }
        #expect(resource.resourceRequests.isEmpty)
        await #expect { try await service.add("x") } throws: { error in
            (error as? TaskServiceError)?.reason == "The Scope claim does not contain the write permission."
        }
    }
}
