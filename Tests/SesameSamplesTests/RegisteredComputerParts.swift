import Foundation
import SesameCore
import SesameTestSupport

/// The test's sign-in pages, filled as a person fills them as `user`, as the Core's sign-in agent
/// (what a computer's registration goes through).
final class HeadlessSignInPages: SignInUserAgent {
    let browser: HeadlessBrowser
    let user: String

    init(_ browser: HeadlessBrowser, user: String) {
        self.browser = browser
        self.user = user
    }

    func present(_ session: SignInSession) async throws {
        let page = try await browser.signIn(user, authorize: session.authorizationURL.absoluteString)
        guard let location = page.location, let redirect = URL(string: location), session.resume(with: redirect) else {
            session.cancel()
            return
        }
    }

    func dismiss(_ session: SignInSession) async {}
}

/// A device identity kept in memory, as the keyring keeps it (its one secret).
final class MemoryDeviceIdentityStorage: DeviceIdentityStorage, @unchecked Sendable {
    private let lock = NSLock()
    private var value: Secret?
    var location: String { "memory" }
    func load() throws -> Secret? { lock.withLock { value } }
    func save(_ value: Secret) throws { lock.withLock { self.value = value } }
    func clear() throws { lock.withLock { value = nil } }
}
