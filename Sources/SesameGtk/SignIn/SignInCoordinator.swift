import CGtkWebKit
import Foundation
import SesameCore

/// Runs interactive sign-ins through the ``SignInView``: prepares the request with the store,
/// shows the identity service's pages, waits for the intercepted redirect and hands it to the
/// store. B2C's "Forgot your password?" continues into the password-reset user flow by itself.
@MainActor
public final class SignInCoordinator {
    private let model: AppModel
    private var waiting: CheckedContinuation<URL?, Never>?
    /// One view per storage group: each keeps its own cookies (SSO) under the XDG data directory.
    private var views: [String: SignInView] = [:]
    /// The view of the sign-in in progress, or of the last one.
    public private(set) var view: SignInView
    /// Called with the view to show while sign-in is up (the window switches to the sign-in page).
    var onShow: ((SignInView, String) -> Void)?
    /// Called when sign-in ends either way.
    var onHide: (() -> Void)?
    /// Storage groups whose user signed out: their next sign-in asks who signs in
    /// (`prompt=login`) rather than letting the service's single sign-on pick the same user again.
    private var signedOutGroups: Set<String> = []

    init(model: AppModel) {
        self.model = model
        let group = model.samples.first?.settings.accountConfiguration.storageGroup ?? "default"
        view = SignInView(dataDirectory: model.webDataDirectory?.appending(path: group), trace: model.trace, automation: model.automationMode)
        views[group] = view
        view.onRedirect = { [weak self] url in self?.finish(url) }
    }

    /// The storage group an account type keeps its tokens (and web data) in.
    func storageGroup(for accountType: String) -> String {
        let base = accountType.components(separatedBy: "#").first ?? accountType
        return model.samples.first { $0.accountType == base }?.settings.accountConfiguration.storageGroup ?? "default"
    }

    /// The sign-in view of a storage group, created on first use.
    func view(forGroup group: String) -> SignInView {
        if let existing = views[group] { return existing }
        // Only one context may allow automation: under WebDriver every group shares the first view.
        if model.automationMode, let first = views.values.first { return first }
        let created = SignInView(dataDirectory: model.webDataDirectory?.appending(path: group), trace: model.trace)
        created.onRedirect = { [weak self] url in self?.finish(url) }
        views[group] = created
        return created
    }

    /// The user signed out of `accountType`: the next sign-in in its group asks for an account.
    public func userSignedOut(accountType: String) {
        signedOutGroups.insert(storageGroup(for: accountType))
    }

    /// "Forget sign-in data": every group's cookies and web data.
    public func forgetSignInData() {
        for group in Set(model.samples.map { $0.settings.accountConfiguration.storageGroup }) {
            view(forGroup: group).forgetSignInData()
        }
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
        let group = storageGroup(for: accountType)
        var parameters = parameters
        if signedOutGroups.contains(group), parameters["prompt"] == nil { parameters["prompt"] = "login" }
        let pending = try await model.store.prepareAuthorization(accountType: accountType, additionalParameters: parameters)
        view = view(forGroup: group)
        onShow?(view, group)
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
                signedOutGroups.remove(group)
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
