import CGtkWebKit
import Foundation
import SesameCore

/// The window: a header bar switching between the three samples, the sign-in view that takes the
/// window while the identity service's pages are up, and the flow inspector.
@MainActor
public final class MainWindow {
    public let window: UnsafeMutablePointer<GtkWidget>
    let model: AppModel
    public let signIn: SignInCoordinator
    private let mainStack: UnsafeMutablePointer<GtkWidget>
    private let samplesStack: UnsafeMutablePointer<GtkWidget>
    private let inspector: UnsafeMutablePointer<GtkWidget>
    private let inspectorPane: UnsafeMutablePointer<GtkWidget>
    private(set) var pages: [AppModel.Sample.Kind: any SamplePage] = [:]
    private let errorBar: UnsafeMutablePointer<GtkWidget>
    private let errorLabel: UnsafeMutablePointer<GtkWidget>
    private var errorChoice: ((Bool) -> Void)?
    private var appearing: Task<Void, Never>?

    public init(application: UnsafeMutablePointer<GtkApplication>?, model: AppModel, initialSample: AppModel.Sample.Kind?) {
        self.model = model
        window = application.map { gtk_application_window_new($0)! } ?? gtk_window_new(GTK_WINDOW_TOPLEVEL)!
        gtk_window_set_default_size(sesame_window(window), 1100, 720)
        gtk_window_set_title(sesame_window(window), "Sesame")
        signIn = SignInCoordinator(model: model)

        samplesStack = gtk_stack_new()!
        gtk_stack_set_transition_type(sesame_stack(samplesStack), GTK_STACK_TRANSITION_TYPE_CROSSFADE)
        let header = gtk_header_bar_new()!
        gtk_header_bar_set_show_close_button(sesame_header_bar(header), 1)
        gtk_header_bar_set_title(sesame_header_bar(header), "Sesame")
        let switcher = gtk_stack_switcher_new()!
        gtk_stack_switcher_set_stack(sesame_stack_switcher(switcher), sesame_stack(samplesStack))
        Widgets.setAccessibleName(switcher, L("Samples"))
        gtk_header_bar_set_custom_title(sesame_header_bar(header), switcher)
        gtk_window_set_titlebar(sesame_window(window), header)

        // Sign-in takes the window; Cancel closes it cleanly.
        let signInPage = Widgets.box(vertical: true, spacing: 0)
        let signInBar = Widgets.box(vertical: false, spacing: 6)
        Widgets.margin(signInBar, 6)
        let signInTitle = Widgets.label(L("Sign in"), xalign: 0)
        Widgets.pack(signInBar, signInTitle, expand: true)
        let signInViews = gtk_stack_new()!
        let firstView = signIn.view.widget
        gtk_stack_add_named(sesame_stack(signInViews), firstView, "first")
        Widgets.pack(signInPage, signInBar)
        Widgets.pack(signInPage, signInViews, expand: true)
        mainStack = gtk_stack_new()!
        gtk_stack_add_named(sesame_stack(mainStack), samplesStack, "samples")
        gtk_stack_add_named(sesame_stack(mainStack), signInPage, "sign-in")

        inspector = gtk_text_view_new()!
        gtk_text_view_set_editable(sesame_text_view(inspector), 0)
        gtk_text_view_set_monospace(sesame_text_view(inspector), 1)
        gtk_text_view_set_wrap_mode(sesame_text_view(inspector), GTK_WRAP_WORD_CHAR)
        Widgets.setAccessibleName(inspector, L("Flow inspector"))
        let inspectorBox = Widgets.box(vertical: true, spacing: 4)
        Widgets.margin(inspectorBox, 6)
        let inspectorTitle = Widgets.label("", xalign: 0)
        Widgets.setMarkup(inspectorTitle, "<b>\(L("Flow inspector"))</b>")
        Widgets.pack(inspectorBox, inspectorTitle)
        Widgets.pack(inspectorBox, Widgets.scrolled(inspector), expand: true)
        inspectorPane = inspectorBox
        // A failed sign-in: the service's description with Retry and Cancel, like the seeds' alert.
        errorBar = Widgets.box(vertical: false, spacing: 8)
        Widgets.margin(errorBar, 8)
        errorLabel = Widgets.label("", wrap: true, xalign: 0)
        Widgets.setAccessibleName(errorLabel, L("Sign-in error"))
        gtk_widget_set_name(errorBar, "sign-in-error")
        Widgets.pack(errorBar, errorLabel, expand: true)
        let content = Widgets.box(vertical: true, spacing: 0)
        Widgets.pack(content, errorBar)
        Widgets.pack(content, mainStack, expand: true)
        let paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL)!
        gtk_paned_pack1(sesame_paned(paned), content, 1, 0)
        gtk_paned_pack2(sesame_paned(paned), inspectorBox, 0, 1)
        gtk_paned_set_position(sesame_paned(paned), 780)
        gtk_container_add(sesame_container(window), paned)

        for sample in model.samples {
            let page: any SamplePage = switch sample.kind {
            case .directory: DirectoryPage(model: model, sample: sample, signIn: signIn)
            case .tasks: TasksPage(model: model, sample: sample, signIn: signIn)
            case .me: MePage(model: model, sample: sample, signIn: signIn)
            }
            pages[sample.kind] = page
            gtk_stack_add_titled(sesame_stack(samplesStack), page.widget, sample.kind.rawValue, page.title)
        }

        let signOut = Widgets.button(L("Sign out"), accessibleName: L("Sign out of this sample")) { [weak self] in self?.signOutCurrent() }
        let forget = Widgets.button(L("Forget sign-in data"), accessibleName: L("Forget sign-in data")) { [weak self] in
            self?.signIn.forgetSignInData()
            self?.model.trace.record("sign-in-data-forgotten")
        }
        let cancel = Widgets.button(L("Cancel"), accessibleName: L("Cancel sign-in")) { [weak self] in self?.signIn.cancel() }
        let retryButton = Widgets.button(L("Retry"), accessibleName: L("Retry sign-in")) { [weak self] in self?.answerError(retry: true) }
        let cancelError = Widgets.button(L("Cancel"), accessibleName: L("Cancel after the sign-in error")) { [weak self] in self?.answerError(retry: false) }
        Widgets.pack(errorBar, retryButton)
        Widgets.pack(errorBar, cancelError)
        signIn.presentFailure = { [weak self] error, choose in self?.showError(error, choose) }
        Widgets.pack(signInBar, cancel)
        gtk_header_bar_pack_end(sesame_header_bar(header), signOut)
        gtk_header_bar_pack_end(sesame_header_bar(header), forget)

        signIn.onShow = { [weak self] view, group in
            guard let self else { return }
            if gtk_widget_get_parent(view.widget) == nil {
                gtk_stack_add_named(sesame_stack(signInViews), view.widget, group)
            }
            gtk_widget_show(view.widget)
            gtk_stack_set_visible_child(sesame_stack(signInViews), view.widget)
            Widgets.setText(signInTitle, L("Sign in — the identity service’s own page"))
            gtk_stack_set_visible_child_name(sesame_stack(self.mainStack), "sign-in")
        }
        signIn.onHide = { [weak self] in
            guard let self else { return }
            gtk_stack_set_visible_child_name(sesame_stack(self.mainStack), "samples")
        }
        model.trace.observe { [weak self] event in self?.appendToInspector(event) }
        Signals.onEvent(window, "delete-event") { [weak self] in
            if self?.signIn.isSigningIn == true { self?.signIn.cancel() }
            return false
        }

        gtk_widget_show_all(window)
        if !signIn.isSigningIn { gtk_widget_hide(firstView) }
        gtk_widget_hide(errorBar)
        if let initialSample, pages[initialSample] != nil {
            gtk_stack_set_visible_child_name(sesame_stack(samplesStack), initialSample.rawValue)
        }
        Signals.onNotify(samplesStack, "visible-child") { [weak self] in self?.currentPageAppears() }
        MainLoop.whenIdle { [weak self] in
            self?.model.trace.record("window-shown")
            self?.currentPageAppears()
        }
    }

    var currentKind: AppModel.Sample.Kind? {
        gtk_stack_get_visible_child_name(sesame_stack(samplesStack)).flatMap { AppModel.Sample.Kind(rawValue: String(cString: $0)) }
    }

    private func currentPageAppears() {
        guard let kind = currentKind, let page = pages[kind], !signIn.isSigningIn else { return }
        appearing = Task { await page.appear() }
    }

    private func showError(_ error: AccountStoreError, _ choose: @escaping (Bool) -> Void) {
        errorChoice = choose
        // The service's first line ("AADSTS65004: User declined…") is the message; its code is
        // added only when the message does not already say it.
        let code = error.serviceCode.flatMap { error.message.contains($0) ? nil : $0 }
        Widgets.setText(errorLabel, [error.message, code].compactMap { $0 }.joined(separator: "\n"))
        gtk_widget_show_all(errorBar)
    }

    private func answerError(retry: Bool) {
        gtk_widget_hide(errorBar)
        let choose = errorChoice
        errorChoice = nil
        choose?(retry)
    }

    /// The error bar's text while a sign-in error is shown (tests).
    var signInErrorText: String? {
        Widgets.isVisible(errorBar) ? gtk_label_get_text(sesame_label(errorLabel)).map { String(cString: $0) } : nil
    }

    /// Answers the error bar as the user would (tests).
    func chooseAfterError(retry: Bool) { answerError(retry: retry) }

    /// Shows the current sample again (as switching to it does): it signs in if needed.
    func showSampleAgain() { currentPageAppears() }

    private func signOutCurrent() {
        guard let kind = currentKind, let page = pages[kind] else { return }
        Task { await page.signOut() }
    }

    private func appendToInspector(_ event: FlowTrace.Event) {
        let buffer = gtk_text_view_get_buffer(sesame_text_view(inspector))
        var end = GtkTextIter()
        gtk_text_buffer_get_end_iter(buffer, &end)
        // Query values are already redacted; the inspector shows only the names, to stay readable.
        let fields = event.fields.map { "\($0.0)=\($0.1.replacingOccurrences(of: "=<redacted>", with: ""))" }.joined(separator: "  ")
        gtk_text_buffer_insert(buffer, &end, String(format: "%7.3f  %@  %@\n", event.time, event.name, fields), -1)
        gtk_text_buffer_get_end_iter(buffer, &end)
        gtk_text_view_scroll_to_iter(sesame_text_view(inspector), &end, 0, 0, 0, 1)
    }

    /// The Directory page (tests).
    var directoryPage: DirectoryPage? { pages[.directory] as? DirectoryPage }
    var tasksPage: TasksPage? { pages[.tasks] as? TasksPage }
    var mePage: MePage? { pages[.me] as? MePage }

    /// Switches to a sample, as clicking its tab does.
    func show(_ kind: AppModel.Sample.Kind) {
        gtk_stack_set_visible_child_name(sesame_stack(samplesStack), kind.rawValue)
    }
}
