import CGtkWebKit
import Foundation
import SesameCore

/// The B2C sample: the signed-in user's tasks, adding one, signing out and in as someone else.
@MainActor
final class TasksPage: SamplePage {
    let widget: UnsafeMutablePointer<GtkWidget>
    private let model: AppModel
    private let sample: AppModel.Sample
    private let signIn: SignInCoordinator
    private let list: UnsafeMutablePointer<GtkWidget>
    private let entry: UnsafeMutablePointer<GtkWidget>
    private let status: UnsafeMutablePointer<GtkWidget>
    private let who: UnsafeMutablePointer<GtkWidget>
    private var account: Account?
    private(set) var tasks: [TaskItem] = []

    init(model: AppModel, sample: AppModel.Sample, signIn: SignInCoordinator) {
        self.model = model
        self.sample = sample
        self.signIn = signIn
        who = Widgets.label("", xalign: 0)
        list = gtk_list_box_new()!
        Widgets.setAccessibleName(list, L("Tasks"))
        entry = gtk_entry_new()!
        gtk_entry_set_placeholder_text(sesame_entry(entry), L("A new task"))
        Widgets.setAccessibleName(entry, L("New task"))
        status = Widgets.label("", wrap: true, xalign: 0)
        let page = Widgets.box(vertical: true, spacing: 8)
        Widgets.margin(page, 12)
        widget = page
        let add = Widgets.button(L("Add"), accessibleName: L("Add the task")) {}
        let switchUser = Widgets.button(L("Sign in as someone else"), accessibleName: L("Sign in as someone else")) {}
        Widgets.pack(page, Widgets.box(vertical: false, spacing: 8, [who, switchUser]))
        let addRow = Widgets.box(vertical: false, spacing: 6)
        Widgets.pack(addRow, entry, expand: true)
        Widgets.pack(addRow, add)
        Widgets.pack(page, addRow)
        Widgets.pack(page, status)
        Widgets.pack(page, Widgets.scrolled(list), expand: true)
        gtk_widget_show_all(widget)
        Signals.onVoid(add, "clicked") { [weak self] in self?.addTask() }
        Signals.onVoid(entry, "activate") { [weak self] in self?.addTask() }
        Signals.onVoid(switchUser, "clicked") { [weak self] in
            Task { await self?.signOut(); await self?.appear() }
        }
    }

    var title: String { sample.title }

    private var service: TaskService? {
        guard let account, case .b2c(let b2c) = sample.settings else { return nil }
        return TaskService(client: model.httpClient, account: account, baseURL: b2c.taskAPI)
    }

    func appear() async {
        if account == nil { account = await model.account(for: sample) }
        if account == nil {
            do {
                account = try await signIn.signIn(accountType: sample.accountType)
            } catch {
                Widgets.setText(status, "\(error)")
                return
            }
        }
        Widgets.setText(who, account.map { String(format: L("Signed in as %@"), $0.displayName) } ?? L("Not signed in"))
        await reload()
    }

    func reload() async {
        guard let service else { return }
        do {
            tasks = try await service.tasks()
            render()
        } catch {
            Widgets.setText(status, "\(error)")
        }
    }

    private func render() {
        Widgets.removeChildren(list)
        for task in tasks {
            let row = Widgets.label(task.text, xalign: 0)
            Widgets.margin(row, 6)
            gtk_container_add(sesame_container(list), row)
        }
        gtk_widget_show_all(list)
        Widgets.setText(status, tasks.isEmpty ? L("No tasks yet.") : String(format: tasks.count == 1 ? L("%d task") : L("%d tasks"), tasks.count))
        let rows = tasks.count
        MainLoop.whenIdle { [weak self] in self?.model.trace.record("list-rendered", [("view", "tasks"), ("rows", String(rows))]) }
    }

    /// Types a task and presses Add, as a user would (the tour).
    func add(_ text: String) {
        gtk_entry_set_text(sesame_entry(entry), text)
        addTask()
    }

    /// Sends the typed text; it stays in the entry until the service has it.
    private func addTask() {
        guard let service else { return }
        let text = gtk_entry_get_text(sesame_entry(entry)).map { String(cString: $0) } ?? ""
        Task { [weak self] in
            do {
                try await service.add(text)
                guard let self else { return }
                gtk_entry_set_text(sesame_entry(self.entry), "")
                await self.reload()
            } catch {
                self.map { Widgets.setText($0.status, "\(error)") }
            }
        }
    }

    func signOut() async {
        if let account { try? await model.store.remove(account) }
        account = nil
        signIn.userSignedOut(accountType: sample.accountType)
        tasks = []
        render()
        Widgets.setText(who, L("Not signed in"))
        model.trace.record("signed-out", [("accountType", sample.accountType)])
    }
}
