import CGtkWebKit
import Foundation
import SesameCore

/// The v2.0 sample: search the organisation's users as you type, page through them as you
/// scroll, and read one user's details.
@MainActor
final class DirectoryPage: SamplePage {
    let widget: UnsafeMutablePointer<GtkWidget>
    private let model: AppModel
    private let sample: AppModel.Sample
    private let signIn: SignInCoordinator
    private let search: UnsafeMutablePointer<GtkWidget>
    private let list: UnsafeMutablePointer<GtkWidget>
    private let store: UnsafeMutablePointer<GtkListStore>
    private let scrolled: UnsafeMutablePointer<GtkWidget>
    private let spinner: UnsafeMutablePointer<GtkWidget>
    private let status: UnsafeMutablePointer<GtkWidget>
    private let retry: UnsafeMutablePointer<GtkWidget>
    /// Shown while nobody is signed in (after signing out, or a closed sign-in).
    private let signInButton: UnsafeMutablePointer<GtkWidget>
    private let detail: UnsafeMutablePointer<GtkWidget>
    private var users: [GraphUser] = []
    private var nextPage: GraphUserPage?
    private var generation = 0
    private var searchTask: Task<Void, Never>?
    private var pageTask: Task<Void, Never>?
    private var account: Account?

    init(model: AppModel, sample: AppModel.Sample, signIn: SignInCoordinator) {
        self.model = model
        self.sample = sample
        self.signIn = signIn
        search = gtk_search_entry_new()!
        gtk_entry_set_placeholder_text(sesame_entry(search), L("Search people by name, email or user name"))
        Widgets.setAccessibleName(search, L("Search the directory"))
        // A GtkTreeView over a list store: only the visible rows are drawn, however many pages load.
        store = sesame_string_list_store_new(3)!
        list = gtk_tree_view_new_with_model(sesame_tree_model(store))!
        gtk_tree_view_append_column(sesame_tree_view(list), sesame_text_column(L("Name"), 0, 1))
        gtk_tree_view_append_column(sesame_tree_view(list), sesame_text_column(L("Mail"), 1, 0))
        gtk_tree_view_append_column(sesame_tree_view(list), sesame_text_column(L("User name"), 2, 0))
        gtk_tree_view_set_enable_search(sesame_tree_view(list), 0)
        Widgets.setAccessibleName(list, L("People"))
        scrolled = Widgets.scrolled(list)
        spinner = gtk_spinner_new()!
        Widgets.setAccessibleName(spinner, L("Loading"))
        status = Widgets.label("", wrap: true, xalign: 0.5)
        retry = Widgets.button(L("Retry"), accessibleName: L("Retry the search")) {}
        signInButton = Widgets.button(L("Sign in"), accessibleName: L("Sign in")) {}
        detail = gtk_grid_new()!
        gtk_grid_set_row_spacing(sesame_grid(detail), 6)
        gtk_grid_set_column_spacing(sesame_grid(detail), 12)
        Widgets.margin(detail, 12)

        let left = Widgets.box(vertical: true, spacing: 6)
        Widgets.margin(left, 12)
        Widgets.pack(left, search)
        let statusRow = Widgets.box(vertical: false, spacing: 6, [spinner, status, retry, signInButton])
        Widgets.pack(left, statusRow)
        Widgets.pack(left, scrolled, expand: true)
        let paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL)!
        gtk_paned_pack1(sesame_paned(paned), left, 1, 0)
        gtk_paned_pack2(sesame_paned(paned), Widgets.scrolled(detail), 0, 0)
        gtk_paned_set_position(sesame_paned(paned), 520)
        widget = paned
        gtk_grid_attach(sesame_grid(detail), Widgets.label(L("Select someone to see their details."), wrap: true), 0, 0, 2, 1)
        gtk_widget_show_all(widget)
        Widgets.setVisible(retry, false)
        Widgets.setVisible(signInButton, false)

        Signals.onVoid(search, "search-changed") { [weak self] in self?.searchChanged() }
        let selection = gtk_tree_view_get_selection(sesame_tree_view(list))!
        Signals.onVoid(selection, "changed") { [weak self] in
            let index = sesame_tree_selection_index(selection)
            self?.select(index < 0 ? nil : Int(index))
        }
        Signals.onEdgeReached(sesame_scrolled_window(scrolled)) { [weak self] position in
            if position == GTK_POS_BOTTOM { self?.loadMore() }
        }
        Signals.onVoid(retry, "clicked") { [weak self] in self?.searchChanged() }
        Signals.onVoid(signInButton, "clicked") { [weak self] in
            guard let self, !self.signIn.isSigningIn else { return }
            Task { await self.appear() }
        }
    }

    var title: String { sample.title }

    func appear() async {
        if account == nil { account = await model.account(for: sample) }
        if account == nil {
            do {
                account = try await signIn.signIn(accountType: sample.accountType)
            } catch {
                show(error: error)
                return
            }
        }
        Widgets.setVisible(signInButton, account == nil)
        guard account != nil else {
            setStatus(L("Sign in to search your organisation’s people."), retry: false)
            return
        }
        if users.isEmpty { searchChanged() }
    }

    func signOut() async {
        if let account { try? await model.store.remove(account) }
        account = nil
        signIn.userSignedOut(accountType: sample.accountType)
        users = []
        gtk_list_store_clear(store)
        model.trace.record("signed-out", [("accountType", sample.accountType)])
        setStatus(L("Signed out."), retry: false)
        Widgets.setVisible(signInButton, true)
    }

    private var directory: GraphUserDirectory? {
        guard let account, case .graph(let graph) = sample.settings else { return nil }
        return GraphUserDirectory(client: model.httpClient, account: account, baseURL: graph.graphBaseURL)
    }

    /// A new search: the previous one is cancelled, and its answer (if it comes) is dropped.
    private func searchChanged() {
        guard let directory else { return }
        let text = gtk_entry_get_text(sesame_entry(search)).map { String(cString: $0) } ?? ""
        generation += 1
        let current = generation
        searchTask?.cancel()
        pageTask?.cancel()
        gtk_spinner_start(sesame_spinner(spinner))
        setStatus(L("Searching…"), retry: false)
        searchTask = Task { [weak self] in
            do {
                let page = try await directory.search(text)
                guard let self, current == self.generation, !Task.isCancelled else { return }
                self.replace(with: page)
            } catch {
                guard let self, current == self.generation, !Task.isCancelled else { return }
                self.show(error: error)
            }
        }
    }

    private func loadMore() {
        guard let directory, let page = nextPage, page.nextLink != nil, pageTask == nil else { return }
        let current = generation
        gtk_spinner_start(sesame_spinner(spinner))
        pageTask = Task { [weak self] in
            defer { self?.pageTask = nil }
            do {
                let next = try await directory.nextPage(after: page)
                guard let self, current == self.generation, let next else { return }
                self.append(next)
            } catch {
                guard let self, current == self.generation else { return }
                self.show(error: error)
            }
        }
    }

    private func replace(with page: GraphUserPage) {
        users = []
        gtk_list_store_clear(store)
        append(page)
        if page.users.isEmpty { setStatus(L("No one matches."), retry: false) }
    }

    private func append(_ page: GraphUserPage) {
        nextPage = page
        for user in page.users {
            sesame_string_list_store_append(store, user.displayName ?? user.userPrincipalName ?? "?", user.mail ?? L("no mail"), user.userPrincipalName ?? "")
        }
        users += page.users
        gtk_spinner_stop(sesame_spinner(spinner))
        setStatus(users.isEmpty ? L("No one matches.") : String(format: page.nextLink == nil ? L("%d people") : L("%d people — scroll for more"), users.count), retry: false)
        let rows = users.count
        MainLoop.whenIdle { [weak self] in
            self?.model.trace.record("list-rendered", [("view", "directory"), ("rows", String(rows))])
        }
    }

    private func select(_ index: Int?) {
        Widgets.removeChildren(detail)
        guard let index, index < users.count else { return }
        let user = users[index]
        let fields: [(String, String)] = [
            (L("Name"), user.displayName ?? ""), (L("User name"), user.userPrincipalName ?? ""), (L("Mail"), user.mail ?? "—"),
            (L("Business phones"), user.businessPhones.isEmpty ? "—" : user.businessPhones.joined(separator: "\n")),
            (L("Mobile"), user.mobilePhone ?? "—"), (L("Job title"), user.jobTitle ?? "—"), (L("Office"), user.officeLocation ?? "—"),
        ]
        for (row, field) in fields.enumerated() {
            let key = Widgets.label(field.0, xalign: 1)
            gtk_style_context_add_class(gtk_widget_get_style_context(key), "dim-label")
            let value = Widgets.label(field.1, wrap: true, xalign: 0)
            gtk_label_set_selectable(sesame_label(value), 1)
            Widgets.setAccessibleName(value, field.0)
            gtk_grid_attach(sesame_grid(detail), key, 0, Int32(row), 1, 1)
            gtk_grid_attach(sesame_grid(detail), value, 1, Int32(row), 1, 1)
        }
        gtk_widget_show_all(detail)
    }

    private func setStatus(_ text: String, retry showRetry: Bool) {
        Widgets.setText(status, text)
        Widgets.setVisible(retry, showRetry)
        if !showRetry, text != L("Searching…") { gtk_spinner_stop(sesame_spinner(spinner)) }
    }

    private func show(error: Error) {
        gtk_spinner_stop(sesame_spinner(spinner))
        setStatus("\(error)", retry: true)
    }

    /// Rows in the list (tests).
    var rowCount: Int { Int(gtk_tree_model_iter_n_children(sesame_tree_model(store), nil)) }

    /// The name in the first row (tests).
    var firstRowName: String? { users.first?.displayName }

    /// The search entry's placeholder, as the user reads it (tests).
    var searchPlaceholder: String { gtk_entry_get_placeholder_text(sesame_entry(search)).map { String(cString: $0) } ?? "" }

    /// Types into the search entry as a user would (tests, the tour).
    func type(_ text: String) { gtk_entry_set_text(sesame_entry(search), text) }

    /// Selects a row as a click would (the tour).
    func selectRow(_ index: Int) {
        let selection = gtk_tree_view_get_selection(sesame_tree_view(list))
        let path = gtk_tree_path_new_from_indices_single(Int32(index))
        gtk_tree_selection_select_path(selection, path)
        gtk_tree_path_free(path)
    }
}

/// One sample's page in the window.
@MainActor
protocol SamplePage: AnyObject {
    var widget: UnsafeMutablePointer<GtkWidget> { get }
    var title: String { get }
    /// The page became visible: sign in if needed, then load.
    func appear() async
    func signOut() async
}
