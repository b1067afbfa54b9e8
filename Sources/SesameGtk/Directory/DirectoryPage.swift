import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameWindowModel

/// The v2.0 sample's widgets over ``DirectorySearch``: a search field, the people as a table
/// (only visible rows are drawn, however many pages load), a status line, and one person's
/// details beside the list (under it in a narrow window). With nobody signed in the whole page is
/// a status page with Sign in; no one matching, or a failure, is a status page in the list's place.
@MainActor
final class DirectoryPage: SamplePage {
    let root: Widget
    private let pages = Stack(sizedByVisibleChild: true)
    let model: DirectorySearch
    private let trace: FlowTrace
    private let search: SearchEntry
    private let table: TextTable
    private let spinner = Spinner()
    private let status = Label("", wrap: true, xalign: 0.5)
    /// The whole page while nobody is signed in.
    let signedOutPage = StatusPage(name: L("Directory status"))
    /// In the list's place: no one matches, or the search failed.
    let listStatus = StatusPage(name: L("Search status"))
    private let listArea = Stack(sizedByVisibleChild: true)
    /// The list beside the details, or above them in a narrow window.
    let split: Paned
    private let details = Grid(rowSpacing: 2)
    private let detailsPane: ScrolledWindow
    /// A sign-in just ended: the search field takes the focus once it takes input.
    private var focusWhenSearchable = false

    init(session: SampleSession, trace: FlowTrace) {
        model = DirectorySearch(session: session)
        self.trace = trace
        search = SearchEntry(placeholder: L("Search people by name, email or user name"))
        search.accessibleName = L("Search the directory")
        table = TextTable(columns: [L("Name"), L("Mail"), L("User name")])
        table.accessibleName = L("People")
        spinner.accessibleName = L("Loading")
        status.accessibleName = L("Search progress")
        details.setMargin(12)
        detailsPane = ScrolledWindow(details)

        let left = Box(vertical: true, spacing: 6)
        left.setMargin(12)
        left.pack(search)
        left.pack(Box(vertical: false, spacing: 6, [spinner, status]))
        let scrolled = ScrolledWindow(table, horizontal: true)
        listArea.add(scrolled, name: "table")
        listArea.add(listStatus.root, name: "status")
        left.pack(listArea, expand: true)
        // The list takes what the window has to spare; the details keep their width (they ask for
        // it, and the handle is placed by what the panes ask for until the user drags it).
        detailsPane.setMinimumSize(width: Int32(Self.detailsWidth))
        split = Paned(left, detailsPane, position: 520, resizeEnd: false, shrinkEnd: false)
        split.unsetPosition()
        pages.add(signedOutPage.root, name: "status")
        pages.add(split, name: "content")
        root = pages
        split.onSizeAllocated { [weak self] width, height in self?.adapt(width: width, height: height) }
        root.showAll()
        pages.visibleChildName = "content"
        search.isSensitive = false
        showDetails(of: nil)

        model.onChange = { [weak self] change in self?.render(change) }
        // A sign-in's step waits for Next, or went ahead: the page says so, or no longer.
        trace.observe { [weak self] event in
            guard event.name == "step-waiting" || event.name == "step-released", let self, self.model.session.isSigningIn else { return }
            self.render(.status)
        }
        // A closed window's stacks have lost their children: nothing renders into them.
        root.onDestroy { [weak self] in self?.model.onChange = nil }
        search.onSearchChanged { [weak self] in
            guard let self else { return }
            // When GTK's search delay has passed (the text itself is the user's: only its length).
            self.trace.record("search-started", [("characters", String(self.search.text.count))])
            self.model.search(self.search.text)
        }
        table.onSelectionChanged { [weak self] in
            guard let self else { return }
            self.model.select(self.table.selectedRow)
        }
        scrolled.onBottomReached { [weak self] in self?.model.loadMore() }
        signedOutPage.onAction = { [weak self] action in
            guard let self else { return }
            Task { await self.model.perform(action) }
        }
        listStatus.onAction = { [weak self] action in
            guard let self else { return }
            // The button goes with the status page: the keyboard goes to the search field.
            self.search.grabFocus()
            if action == .showEveryone { self.search.text = "" }
            Task { await self.model.perform(action) }
        }
    }

    var title: String { L("Directory") }

    var session: SampleSession { model.session }

    func appear() async { await model.appear() }

    func signOut() async { await model.signOut() }

    func switchAccount() async {
        await model.signOut()
        guard !model.isSignedIn else { return }
        await model.signIn()
    }

    func close() {
        progressShown?.cancel()
        model.close()
    }

    var onContentShown: (() -> Void)?

    func networkReturned() { model.networkReturned() }

    var searchField: Widget? { search }

    func refresh() { model.retry() }

    func focusFirstControlWhenReady() {
        if pages.visibleChildName == "status", signedOutPage.focusAction() { return }
        focusWhenSearchable = true
        focusSearchIfReady()
    }

    private func focusSearchIfReady() {
        guard focusWhenSearchable, search.isSensitive else { return }
        focusWhenSearchable = false
        search.grabFocus()
    }

    private func render(_ change: DirectorySearch.Change) {
        switch change {
        case .replaced:
            table.removeAll()
            appendRows(model.users.indices)
        case .appended(let range):
            appendRows(range)
        case .status:
            showProgress()
            showPageStatus()
            search.isSensitive = model.isSignedIn
            focusSearchIfReady()
        case .selection:
            showDetails(of: model.selected)
        }
    }

    /// Below this width the details go under the list: beside it, either would be too narrow.
    static let narrowWidth = 900
    /// The details' width beside the list.
    static let detailsWidth = 340
    /// In a narrow window, the most height the details take before they scroll.
    static let narrowDetailsHeight = 260
    private var laidOutNarrow: Bool?

    /// Lays the page out for its size: the details beside the list, or under it in a narrow
    /// window — decided when the size changes across ``narrowWidth`` (and first), changed after
    /// this allocation (never inside it). Either way the panes' own sizes place the handle until
    /// the user drags it: the details get what they ask for — under the list, the height of their
    /// fields, name beside value (at most ``narrowDetailsHeight``) — and the list the rest, at every
    /// height of the window (the page grows from the sign-in's share of it to all of it).
    private func adapt(width: Int, height: Int) {
        let narrow = width < Self.narrowWidth
        guard narrow != laidOutNarrow else { return }
        laidOutNarrow = narrow
        MainLoop.whenIdle { [weak self] in
            guard let self else { return }
            self.split.isVertical = narrow
            self.showDetails(of: self.model.selected)
            self.split.unsetPosition()
            self.trace.record("directory-layout", [("layout", narrow ? "details-under-list" : "details-beside-list")])
        }
    }

    /// The status pages: the whole page while nobody is signed in, the list's place for no
    /// matches or a failure (offline: the network's icon).
    private func showPageStatus() {
        let pageStatus = model.pageStatus
        if let pageStatus, pageStatus.coversPage {
            // The keyboard was on the page, or was to go there (a sign-in closed): to Sign in.
            let hadFocus = listStatus.button.hasFocus || search.hasFocus || focusWhenSearchable
            signedOutPage.show(pageStatus)
            pages.visibleChildName = "status"
            if hadFocus {
                focusWhenSearchable = false
                signedOutPage.focusAction()
            }
            return
        }
        pages.visibleChildName = "content"
        if let pageStatus {
            listStatus.show(pageStatus, iconName: model.session.network.isOnline ? nil : "network-offline-symbolic")
            listArea.visibleChildName = "status"
        } else {
            listArea.visibleChildName = "table"
        }
        status.isVisible = pageStatus == nil
    }

    /// The status line and the spinner. A search starting shows nothing for ``progressDelay``:
    /// most answers come first, and a frame painted for "Searching…" would hold the rows back to
    /// the next refresh (GTK paints at most one frame per refresh, 16.7 ms at 60 Hz); a longer wait
    /// shows its progress.
    private func showProgress() {
        progressShown?.cancel()
        progressShown = nil
        guard model.isLoading, !spinner.isSpinning else {
            status.text = model.statusText
            spinner.isSpinning = model.isLoading
            return
        }
        progressShown = Task { [weak self] in
            try? await Task.sleep(for: Self.progressDelay)
            guard let self, !Task.isCancelled, self.model.isLoading else { return }
            self.status.text = self.model.statusText
            self.spinner.isSpinning = true
        }
    }

    /// How long a search or a page may take before its progress shows.
    static let progressDelay: Duration = .milliseconds(100)
    private var progressShown: Task<Void, Never>?

    private func appendRows(_ range: Range<Int>) {
        table.append(
            model.users[range].map { user in
                [user.displayName ?? user.userPrincipalName ?? "?", user.mail ?? L("no mail"), user.userPrincipalName ?? ""]
            })
        let rows = table.rowCount
        guard !range.isEmpty || rows == 0 else { return }
        // In the table's model; then on screen, once the frame that shows them is painted.
        trace.record("rows-taken", [("view", "directory"), ("rows", String(rows))])
        onContentShown?()
        // Where that frame's time goes: waiting for it, its layout, its painting.
        MainLoop.afterNextPaint(
            of: table, phases: { [weak self] phase in self?.trace.record("rows-frame-\(phase.rawValue)", [("view", "directory")]) },
            { [weak self] in self?.trace.record("list-rendered", [("view", "directory"), ("rows", String(rows))]) })
    }

    private func showDetails(of user: GraphUser?) {
        details.removeAll()
        guard let user else {
            details.attach(Label(L("Select someone to see their details."), wrap: true), x: 0, y: 0, width: 2)
            details.showAll()
            return
        }
        let fields: [(String, String)] = [
            (L("Name"), user.displayName ?? ""), (L("User name"), user.userPrincipalName ?? ""), (L("Mail"), user.mail ?? "—"),
            (L("Business phones"), user.businessPhones.isEmpty ? "—" : user.businessPhones.joined(separator: "\n")),
            (L("Mobile"), user.mobilePhone ?? "—"), (L("Job title"), user.jobTitle ?? "—"), (L("Office"), user.officeLocation ?? "—"),
        ]
        // Beside the list, each field's name above its value, both the pane's whole width: a
        // narrow pane (the inspector beside it) still shows a long user name in a few lines, not a
        // letter a line. Under the list (a narrow window, a wide pane), name and value side by
        // side: half the height, so the list keeps its rows.
        let sideBySide = laidOutNarrow == true
        for (row, field) in fields.enumerated() {
            let key = Label(field.0, xalign: 0)
            key.addStyleClass("dim-label")
            // An empty field ("—") is nothing to copy: Tab does not stop on it.
            let value = Label(field.1, wrap: true, xalign: 0, selectable: field.1 != "—")
            value.accessibleName = field.0
            value.tooltip = field.1
            value.expandsHorizontally = true
            if sideBySide {
                details.attach(key, x: 0, y: Int32(row))
                details.attach(value, x: 1, y: Int32(row))
            } else {
                details.attach(key, x: 0, y: Int32(2 * row))
                details.attach(value, x: 0, y: Int32(2 * row + 1))
            }
        }
        details.showAll()
        askForDetailsHeight()
    }

    /// Under the list, the details ask for the height of their fields (at most
    /// ``narrowDetailsHeight``): the panes' sizes then give the list the rest.
    private func askForDetailsHeight() {
        guard laidOutNarrow == true else {
            detailsPane.minimumContentHeight = nil
            return
        }
        let width = split.frameInWindow?.width ?? Self.narrowWidth
        detailsPane.minimumContentHeight = min(details.naturalHeight(forWidth: width), Self.narrowDetailsHeight)
    }
}
