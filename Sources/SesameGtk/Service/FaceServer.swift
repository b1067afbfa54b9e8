import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// `sesame --service-face`: the window the account service (`sesame-service`, which has no GTK)
/// starts when the user must be asked or sign in. It reads the service's requests on standard
/// input (``FaceProtocol``), shows the access question on its own or over the window, signs in
/// on the window's pages, answers on standard output, and ends a few seconds after the last
/// question is answered and its window closed — or at once when the service goes.
@MainActor
final class FaceServer {
    /// How long it stays with nothing to do (no window, no request) before it ends.
    static let idleLifetime: Duration = .seconds(5)

    private let app: Application
    private let options: MainWindow.Options
    private let questions = AccessDialog()
    private var model: AppModel?
    private var window: MainWindow?
    private var channel: LineChannel?
    /// The service's token, which every reply carries (its first line gives it).
    private var token: String?
    private var open = 0
    private var idle: Task<Void, Never>?
    /// The service's events not yet in the trace (the model is still being made).
    private var serviceEvents: [(String, [(String, String)])] = []

    init(app: Application, options: MainWindow.Options) {
        self.app = app
        self.options = options
        questions.parent = { [weak self] in self?.window?.window.isVisible == true ? self?.window?.window : nil }
        questions.knownPrograms = { [] }
    }

    func start(_ makeModel: @escaping @MainActor () async -> AppModel) {
        guard channel == nil else { return }
        app.hold()
        guard let channel = LineChannel.inherited() else {
            Posix.writeStandardError("sesame: --service-face is the account service's window: sesame-service starts it.\n")
            app.quit()
            return
        }
        self.channel = channel
        channel.onLine = { [weak self] line in self?.received(line) }
        channel.onClose = { [weak self] in self?.end() }
        Task {
            model = await makeModel()
            recordServiceEvents()
            scheduleEnd()
        }
    }

    private func recordServiceEvents() {
        guard let model else { return }
        for (name, fields) in serviceEvents.suffix(64) { model.trace.record(name, fields) }
        serviceEvents = []
    }

    private func received(_ line: String) {
        guard let request = FaceRequest(line: line) else { return }
        switch request.kind {
        case .hello:
            if token == nil { token = request.token }
            return
        case .cancel:
            window?.serviceSignIns.cancelBrokerSignIn()
            return
        case .event:
            // The service's own event, in this window's flow inspector.
            guard let name = request.event, name.utf8.count <= 64 else { return }
            let fields = (request.fields ?? []).prefix(16).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
            serviceEvents.append((name, fields + [("by", "sesame-service")]))
            recordServiceEvents()
            return
        default: break
        }
        open += 1
        idle?.cancel()
        Task {
            var reply = await answer(request)
            reply.token = token
            open -= 1
            channel?.send(reply.line)
            scheduleEnd()
        }
    }

    private func answer(_ request: FaceRequest) async -> FaceReply {
        while model == nil { try? await Task.sleep(for: .milliseconds(10)) }
        switch request.kind {
        case .ask:
            guard let question = request.question else { return FaceReply(id: request.id) }
            return FaceReply(id: request.id, answer: await questions.ask(question))
        case .signIn:
            let account = await openWindow().serviceSignIns.serviceSignIn(accountType: request.accountType ?? "")
            return FaceReply(id: request.id, homeAccountID: account?.homeAccountID)
        case .brokerSignIn:
            guard let accountType = request.accountType, let app = request.app, let program = request.program, let model else {
                return FaceReply(id: request.id)
            }
            await model.store.setConfiguration(app.configuration, forAccountType: accountType)
            do {
                let account = try await openWindow().serviceSignIns.brokerSignIn(
                    accountType: accountType, program: program, parameters: request.parameters ?? [:])
                return FaceReply(id: request.id, homeAccountID: account.homeAccountID)
            } catch {
                return FaceReply(id: request.id, error: FaceError(error))
            }
        case .cancel, .event, .hello:
            return FaceReply(id: request.id)
        }
    }

    private func openWindow() -> MainWindow {
        if let window { return window }
        // Started for a program's call: it touches that call's account only.
        var options = options
        options.startedForAProgram = true
        let window = MainWindow(application: app, model: model!, options: options)
        self.window = window
        window.window.onDestroy { [weak self] in
            self?.window = nil
            self?.scheduleEnd()
        }
        return window
    }

    /// Ends once nothing is open for ``idleLifetime``.
    private func scheduleEnd() {
        idle?.cancel()
        guard open == 0, window == nil else { return }
        idle = Task {
            try? await Task.sleep(for: Self.idleLifetime)
            guard !Task.isCancelled, open == 0, window == nil else { return }
            end()
        }
    }

    private func end() {
        questions.dismissAll()
        channel?.close()
        channel = nil
        app.quit()
    }
}

extension SesameApplication {
    /// Runs the account service's window (``FaceServer``) until the service is done with it.
    public static func runFace(makeModel: @escaping @MainActor () async -> AppModel, options: MainWindow.Options) -> Int32 {
        MainLoopBridge.install()
        let app = Application(id: nil)
        let face = FaceServer(app: app, options: options)
        app.onActivate { face.start(makeModel) }
        let status = app.run()
        withExtendedLifetime(face) {}
        return status
    }
}
