import Foundation
import SesameCoreTestSupport
import Testing

@testable import SesameCore

/// Numbers read from outside — a token response, an id_token's claims before its signature is
/// checked, a task, the cache file — are bounded: a huge one is a typed error, never a trap.
@Suite("Hostile numbers")
struct HostileNumberTests {
    @Test(
        "a whole number is JSON's safe integer range, spelled as a number or a string; anything else is none",
        arguments: [
            (JSONValue.number(3599), 3599), (.string(" 3599 "), 3599), (.number(9_007_199_254_740_991), 9_007_199_254_740_991),
            (.number(-9_007_199_254_740_991), -9_007_199_254_740_991), (.number(1e300), nil), (.number(-1e300), nil),
            (.number(1.5), nil), (.number(.infinity), nil), (.string("9223372036854775807"), nil), (.string("1e3"), nil),
            (.number(9_007_199_254_740_992), nil), (.bool(true), nil),
        ] as [(JSONValue, Int?)])
    func integers(value: JSONValue, expected: Int?) {
        #expect(value.integerValue == expected)
    }

    @Test(
        "a token response whose lifetime is huge or not whole is refused as unreadable",
        arguments: ["1e300", "-1e300", "\"9223372036854775807\"", "1.5", "\"soon\""])
    func hugeLifetime(expiresIn: String) {
        let body = Data(#"{"access_token":"at","token_type":"Bearer","expires_in":\#(expiresIn)}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TokenResponse.self, from: body) }
    }

    @Test("an id_token whose exp is 1e300 is refused with a typed error, before and without a trap")
    func hugeExpiry() throws {
        #expect(throws: IDTokenValidationError.malformedClaim("exp")) {
            try IDTokenClaims(["iss": .string("i"), "aud": .string("a"), "sub": .string("s"), "exp": .number(1e300)])
        }
    }

    @Test("sign-in with expires_in 1e300 from the token endpoint fails with a typed error; nothing is stored")
    func signInWithHugeExpiry() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        fixture.provider.expiresIn = 1e300
        await #expect(throws: AccountStoreError.self) { _ = try await fixture.signIn() }
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
    }

    @Test("a cache file with 1e300 for its times is set aside as unreadable (not a crash at every start); sign-in asked again")
    func hugeNumbersInTheCache() async throws {
        let fixture = StoreFixture()
        defer { fixture.remove() }
        let account = try await fixture.signIn()
        let file = try fixture.storage.fileURL(group: fixture.provider.configuration.storageGroup)
        var text = try String(contentsOf: file, encoding: .utf8)
        for field in ["cached_at", "expires_on", "extended_expires_on"] {
            text = text.replacing(try Regex(#""\#(field)"\s*:\s*"?[0-9]+"?"#), with: #""\#(field)":1e300"#)
        }
        #expect(text.contains("1e300"))
        try Data(text.utf8).write(to: file)
        let events = await fixture.store.events()

        #expect(try await fixture.store.accounts(ofType: fixture.accountType).isEmpty)
        var iterator = events.makeAsyncIterator()
        guard case .cacheRecovered(_, let aside) = await iterator.next() else {
            Issue.record("the unreadable cache was not reported")
            return
        }
        #expect(try String(contentsOf: URL(fileURLWithPath: aside), encoding: .utf8) == text)
        await #expect(throws: AccountStoreError.self) { _ = try await fixture.store.accessToken(for: account) }
        _ = try await fixture.signIn()
        #expect(try await fixture.store.accounts(ofType: fixture.accountType).count == 1)
    }

    @Test("a task whose Id is 1e300 is read with no id instead of a trap")
    func hugeTaskID() throws {
        let task = try JSONDecoder().decode(TaskItem.self, from: Data(#"{"Id":1e300,"Text":"Water the plants"}"#.utf8))
        #expect(task.id == "")
        #expect(task.text == "Water the plants")
    }
}
