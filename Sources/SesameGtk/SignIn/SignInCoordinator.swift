import CGtkWebKit
import Foundation
import SesameCore

/// Runs interactive sign-ins through the ``SignInView``: prepares the request with the store,
/// shows the identity service's pages, waits for the intercepted redirect and hands it to the
/// store. B2C's "Forgot your password?" continues into the password-reset user flow by itself.
@MainActor
public final class SignInCoordinator {
    public let view: SignInView
    private let model: AppModel
    private var waiting: CheckedContinuation<URL?, Never>?
    /// Shown while the view is up (the window switches to the sign-in page).
    var onShow: (() -> Void)?
    /// Called when sign-in ends either way.
    var onHide: (() -> Void)?

    init(model: AppModel) {
        self.model = model
        view = SignInView(dataDirectory: model.webDataDirectory, trace: model.trace)
        view.onRedirect = { [weak self] url in self?.finish(url) }
    }

    /// Shows a failed sign-in's description with Retry and Cancel (the seeds' alert) and calls back
    /// with `true` for Retry. Without a presenter, the error is thrown to the caller.
    var presentFailure: ((AccountStoreError, @escaping (Bool) -> Void) -> Void)?

    /// Signs in interactively; nil when the user closed sign-in or cancelled after an error.
    /// An error from the identity service (declined consent, an AADSTS code) is shown with Retry
    /// and Cancel; Retry starts over.
    public func signIn(accountType: String, parameters: [String: String] = [:]) async throws -> Account? {
        while true {
            do {
                return try await attempt(accountType: accountType, parameters: parameters)
            } catch let error where error.code == .cancelled {
                return nil
            } catch {
                guard let presentFailure else { throw error }
                let retry = await withCheckedContinuation { continuation in presentFailure(error) { continuation.resume(returning: $0) } }
                if !retry { return nil }
            }
        }
    }

    private func attempt(accountType: String, parameters: [String: String]) async throws(AccountStoreError) -> Account? {
        let pending = try await model.store.prepareAuthorization(accountType: accountType, additionalParameters: parameters)
        onShow?()
        view.begin(pending)
        let redirect = await withCheckedContinuation { continuation in waiting = continuation }
        onHide?()
        guard let redirect else {
            await model.store.cancelAuthorization(pending)
            return nil
        }
        do {
            let account = try await model.store.handleRedirect(redirect)
            if let account {
                model.trace.record("token-acquired", [("accountType", account.accountType.components(separatedBy: "#").first ?? account.accountType)])
            }
            return account
        } catch let error where error.code == .passwordResetRequested {
            // The B2C seed's AADB2C90118 handling: run the password-reset policy, then go on.
            model.trace.record("sign-in-failed", [("error", error.serviceCode ?? "AADB2C90118")])
            let resetType = AppModel.passwordResetType(accountType)
            guard await model.store.configuration(forAccountType: resetType) != nil else { throw error }
            return try await attempt(accountType: resetType, parameters: [:])
        } catch {
            model.trace.record("sign-in-failed", [("error", error.serviceCode ?? error.code.description)])
            throw error
        }
    }

    /// Closes sign-in without a result.
    public func cancel() {
        view.cancel()
        finish(nil)
    }

    public var isSigningIn: Bool { waiting != nil }

    private func finish(_ url: URL?) {
        let continuation = waiting
        waiting = nil
        continuation?.resume(returning: url)
    }
}
