import CGtkWebKit
import Foundation
import SesameCore

/// The MSAL sample's console: "Call Microsoft Graph" signs in interactively when no account is
/// cached, silently otherwise, and interactively again when the service requires interaction.
@MainActor
final class MePage: SamplePage {
    let widget: UnsafeMutablePointer<GtkWidget>
    private let model: AppModel
    private let sample: AppModel.Sample
    private let signIn: SignInCoordinator
    private let log: UnsafeMutablePointer<GtkWidget>
    private let signOutButton: UnsafeMutablePointer<GtkWidget>
    private var account: Account?

    init(model: AppModel, sample: AppModel.Sample, signIn: SignInCoordinator) {
        self.model = model
        self.sample = sample
        self.signIn = signIn
        log = gtk_text_view_new()!
        gtk_text_view_set_editable(sesame_text_view(log), 0)
        gtk_text_view_set_monospace(sesame_text_view(log), 1)
        gtk_text_view_set_wrap_mode(sesame_text_view(log), GTK_WRAP_WORD_CHAR)
        Widgets.setAccessibleName(log, L("Log"))
        let call = Widgets.button(L("Call Microsoft Graph"), accessibleName: L("Call Microsoft Graph")) {}
        signOutButton = Widgets.button(L("Sign out"), accessibleName: L("Sign out")) {}
        let page = Widgets.box(vertical: true, spacing: 8)
        Widgets.margin(page, 12)
        Widgets.pack(page, Widgets.box(vertical: false, spacing: 8, [call, signOutButton]))
        Widgets.pack(page, Widgets.scrolled(log), expand: true)
        widget = page
        gtk_widget_show_all(widget)
        Signals.onVoid(call, "clicked") { [weak self] in Task { await self?.callGraph() } }
        Signals.onVoid(signOutButton, "clicked") { [weak self] in Task { await self?.signOut() } }
    }

    var title: String { sample.title }

    func appear() async {
        account = await model.account(for: sample)
        gtk_widget_set_sensitive(signOutButton, account == nil ? 0 : 1)
    }

    private func write(_ line: String) {
        let buffer = gtk_text_view_get_buffer(sesame_text_view(log))
        var end = GtkTextIter()
        gtk_text_buffer_get_end_iter(buffer, &end)
        gtk_text_buffer_insert(buffer, &end, line + "\n", -1)
    }

    /// The MSAL sample's logic: silent when an account is cached, interactive otherwise or when
    /// the service says interaction is required.
    func callGraph() async {
        guard case .msal(let msal) = sample.settings else { return }
        do {
            var token: AccessToken
            if let account = await model.account(for: sample) {
                do {
                    token = try await model.store.accessToken(for: account)
                    write("acquireTokenSilent: \(token.secret.masked)")
                } catch let error as AccountStoreError where error.code == .interactionRequired {
                    write("interaction required: \(error.message)")
                    token = try await interactive()
                }
            } else {
                token = try await interactive()
            }
            account = token.account
            gtk_widget_set_sensitive(signOutButton, 1)
            let response = try await model.httpClient.perform(ResourceRequest(url: msal.graphURI), as: token.account)
            write("GET \(msal.graphURI.absoluteString) → \(response.status)")
            write(Self.pretty(response.body))
        } catch {
            write("error: \(error)")
        }
    }

    /// The /me answer as indented JSON (the body as text when it is not JSON).
    static func pretty(_ body: Data) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: body),
              let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        else { return String(decoding: body, as: UTF8.self) }
        return String(decoding: data, as: UTF8.self)
    }

    private func interactive() async throws -> AccessToken {
        write("acquireToken (interactive)")
        guard let account = try await signIn.signIn(accountType: sample.accountType) else { throw CancellationError() }
        let token = try await model.store.accessToken(for: account)
        write("token: \(token.secret.masked)")
        return token
    }

    func signOut() async {
        if let account { try? await model.store.remove(account) }
        account = nil
        signIn.userSignedOut(accountType: sample.accountType)
        gtk_widget_set_sensitive(signOutButton, 0)
        write("signed out")
        model.trace.record("signed-out", [("accountType", sample.accountType)])
    }
}
