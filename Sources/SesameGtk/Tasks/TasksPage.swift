import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameWindowModel

/// The B2C sample's widgets over ``TaskList``: who is signed in, the tasks, a field to add one
/// (its text stays until the service has it). With nobody signed in the whole page is a status
/// page with Sign in; no tasks yet, or a failure to read them, is a status page in the list's place.
@MainActor
final class TasksPage: SamplePage {
    let root: Widget
    private let pages = Stack(sizedByVisibleChild: true)
    let model: TaskList
    private let trace: FlowTrace
    private let who = Label("", xalign: 0)
    private let list = ListBox()
    private let entry: Entry
    private let status = Label("", wrap: true, xalign: 0)
    private let add: Button
    /// The whole page while nobody is signed in.
    let signedOutPage = StatusPage(name: L("Tasks page status"))
    /// In the list's place: no tasks yet, or they could not be read.
    let listStatus = StatusPage(name: L("Task list status"))
    private let listArea = Stack(sizedByVisibleChild: true)
    /// A sign-in just ended: the new-task entry takes the focus once it takes input.
    private var focusWhenWritable = false

    init(session: SampleSession, trace: FlowTrace) {
        model = TaskList(session: session)
        self.trace = trace
        list.accessibleName = L("Tasks")
        who.ellipsizeAtEnd()
        entry = Entry(placeholder: L("A new task"))
        entry.accessibleName = L("New task")
        status.accessibleName = L("Tasks status")
        let page = Box(vertical: true, spacing: 8)
        page.setMargin(12)
        add = Button(L("Add"), accessibleName: L("Add the task"))
        page.pack(who)
        let addRow = Box(vertical: false, spacing: 6)
        addRow.pack(entry, expand: true)
        addRow.pack(add)
        page.pack(addRow)
        page.pack(status)
        listArea.add(ScrolledWindow(list), name: "list")
        listArea.add(listStatus.root, name: "status")
        page.pack(listArea, expand: true)
        pages.add(signedOutPage.root, name: "status")
        pages.add(page, name: "content")
        root = pages
        root.showAll()
        pages.visibleChildName = "content"
        entry.isSensitive = false
        add.isSensitive = false

        model.onChange = { [weak self] in self?.render() }
        // A closed window's stacks have lost their children: nothing renders into them.
        root.onDestroy { [weak self] in self?.model.onChange = nil }
        add.onClick { [weak self] in self?.addTask() }
        entry.onActivate { [weak self] in self?.addTask() }
        signedOutPage.onAction = { [weak self] action in
            guard let self else { return }
            Task { await self.model.perform(action) }
        }
        listStatus.onAction = { [weak self] action in
            guard let self else { return }
            // The button goes with the status page: the keyboard goes to the new task's field.
            self.entry.grabFocus()
            Task { await self.model.perform(action) }
        }
    }

    var title: String { L("Tasks") }

    var session: SampleSession { model.session }

    func switchAccount() async { await model.switchUser() }

    func appear() async { await model.appear() }

    func signOut() async { await model.signOut() }

    func close() { model.close() }

    var onContentShown: (() -> Void)?

    func networkReturned() {
        Task { await model.networkReturned() }
    }

    var searchField: Widget? { entry }

    func refresh() {
        Task { await model.reload() }
    }

    func focusFirstControlWhenReady() {
        if pages.visibleChildName == "status", signedOutPage.focusAction() { return }
        focusWhenWritable = true
        focusEntryIfReady()
    }

    private func focusEntryIfReady() {
        guard focusWhenWritable, entry.isSensitive else { return }
        focusWhenWritable = false
        entry.grabFocus()
    }

    private func render() {
        who.text = model.signedInText
        who.tooltip = model.signedInText
        status.text = model.statusText
        entry.isSensitive = model.isSignedIn
        add.isSensitive = model.isSignedIn
        let pageStatus = model.pageStatus
        if let pageStatus, pageStatus.coversPage {
            // The keyboard was on the page, or was to go there (a sign-in closed): to Sign in.
            let hadFocus = entry.hasFocus || add.hasFocus || listStatus.button.hasFocus || focusWhenWritable
            signedOutPage.show(pageStatus)
            pages.visibleChildName = "status"
            if hadFocus {
                focusWhenWritable = false
                signedOutPage.focusAction()
            }
        } else {
            pages.visibleChildName = "content"
            if let pageStatus {
                listStatus.show(pageStatus, iconName: Self.iconName(for: pageStatus, online: model.session.network.isOnline))
                listArea.visibleChildName = "status"
            } else {
                listArea.visibleChildName = "list"
            }
        }
        // The status page says it already; a count or a failed add stays in the status line.
        status.isVisible = pageStatus == nil && !model.statusText.isEmpty
        focusEntryIfReady()
        list.removeAll()
        for task in model.tasks {
            let row = Label(task.text, wrap: true, xalign: 0)
            row.setMargin(6)
            list.append(row, accessibleName: task.text)
        }
        list.showAll()
        let rows = model.tasks.count
        if rows > 0 { onContentShown?() }
        MainLoop.afterNextPaint(of: list) { [weak self] in
            self?.trace.record("list-rendered", [("view", "tasks"), ("rows", String(rows))])
        }
    }

    private static func iconName(for status: PageStatus, online: Bool) -> String? {
        switch status.kind {
        case .nothingYet: "checkbox-checked-symbolic"
        case .failed where !online: "network-offline-symbolic"
        default: nil
        }
    }

    /// Sends the typed text; it stays in the field until the service has it.
    private func addTask() {
        let text = entry.text
        Task { [weak self] in
            guard let self, await self.model.add(text) else { return }
            if self.entry.text == text { self.entry.text = "" }
        }
    }
}
