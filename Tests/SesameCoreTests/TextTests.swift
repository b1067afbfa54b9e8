import Foundation
import Testing

@testable import SesameCore
@testable import SesameSystem

/// Sesame's own text formatting (without Foundation's ICU) against Foundation's, which the tests
/// may still link: every specifier the sentences and catalogs use prints the same.
@Suite("Text formatting without Foundation")
struct TextTests {
    @Test(
        "printf's specifiers as Foundation's String(format:) writes them",
        arguments: [
            ("%@ refused the connection", ["login.contoso.test"]), ("%d seconds", [42]), ("wait %d second", [1]),
            ("%2$@ then %1$@", ["first", "second"]), ("%.3f s", [1.2346]), ("%.1f", [-0.26]), ("%7.3f|", [3.14159]),
            ("%.1f ms", [16.0]), ("%x %X", [255, 3054]), ("100%% of %@", ["it"]), ("%ld", [Int64(7)]), ("%05d", [-42]),
        ] as [(String, [any Sendable])])
    func formatting(format: String, arguments: [any Sendable]) {
        let foundation = String(
            format: format,
            arguments: arguments.map { argument -> any CVarArg in
                switch argument {
                case let value as String: value as NSString
                case let value as Int: value
                case let value as Int64: value
                case let value as Double: value
                default: "\(argument)"
                }
            })
        #expect(String.formatted(format, arguments) == foundation)
    }

    @Test("a specifier without an argument stays as it is; arguments of any type print as they describe themselves")
    func leftovers() {
        // Decimals round from the shortest decimal form, half away from zero.
        #expect(String(formatting: "%.3f", 1.2345) == "1.235")
        #expect(String(formatting: "%.2f", 9.995) == "10.00")
        #expect(String(formatting: "%.1f", -0.04) == "0.0")
        #expect(String(formatting: "%@ and %@", "one") == "one and %@")
        #expect(String(formatting: "%@", URL(string: "https://x.example/a")!) == "https://x.example/a")
        #expect(String(formatting: "no specifiers") == "no specifiers")
    }

    @Test("percent-encoding: RFC 3986's unreserved characters only; decoding is Foundation's, and refuses what is not UTF-8")
    func percentEncoding() {
        for text in ["O'Brien", "a b+c&d=e", "Γιώργος 王伟", "~._-", "%41"] {
            #expect(
                FormEncoding.escape(text)
                    == text.addingPercentEncoding(
                        withAllowedCharacters: .init(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")))
            #expect(FormEncoding.unescape(FormEncoding.escape(text)) == text)
        }
        for bad in ["%", "%4", "%zz", "%C3%28"] {
            #expect(FormEncoding.unescape(bad) == bad.removingPercentEncoding, "\(bad)")
        }
    }

    @Test("trimming and case-blind comparison")
    func trimming() {
        #expect("  a b \n\t".trimmingWhitespace() == "a b")
        #expect("[::1]".trimming { "[]".contains($0) } == "::1")
        #expect("Alex@Contoso.com".equalsIgnoringCase("alex@contoso.COM"))
        #expect("a:b:c".replacingEvery(":", with: "") == "abc")
    }
}
