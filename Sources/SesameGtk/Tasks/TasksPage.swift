import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService

/// The B2C sample's widgets over ``TaskList``: who is signed in, the tasks, a field to add one
/// (its text stays until the service has it), and "Sign in as someone else".
@MainActor
final class TasksPage: SamplePage {
    let root: Widget
    let model: TaskList
    private let trace: FlowTrace
    private let who = Label("", xalign: 0)
    private let list = ListBox()
    private let entry: Entry
    private let status = Label("", wrap: true, xalign: 0)
    private let add: Button
    /// Says what it does: "Sign in", "Sign in again" or "Retry".
    private let actionButton = Button(L("Sign in"))
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
        page.pack(Box(vertical: false, spacing: 8, [who, actionButton]))
        let addRow = Box(vertical: false, spacing: 6)
        addRow.pack(entry, expand: true)
        addRow.pack(add)
        page.pack(addRow)
        page.pack(status)
        page.pack(ScrolledWindow(list), expand: true)
        root = page
        root.showAll()
        actionButton.hide()
        entry.isSensitive = false
        add.isSensitive = false

        model.onChange = { [weak self] in self?.render() }
        add.onClick { [weak self] in self?.addTask() }
        entry.onActivate { [weak self] in self?.addTask() }
        actionButton.onClick { [weak self] in
            guard let self else { return }
            Task { await self.model.performAction() }
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
        focusEntryIfReady()
        if let action = model.action {
            actionButton.title = action.title
            actionButton.accessibleName = action.title
        }
        actionButton.isVisible = model.action != nil
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

    /// Sends the typed text; it stays in the field until the service has it.
    private func addTask() {
        let text = entry.text
        Task { [weak self] in
            guard let self, await self.model.add(text) else { return }
            if self.entry.text == text { self.entry.text = "" }
        }
    }
}
