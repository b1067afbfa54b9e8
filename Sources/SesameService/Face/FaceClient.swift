import FoundationEssentials
import SesameCore
import SesameGIO

/// The service's way to the user when it runs without GTK: the access question and the sign-ins
/// happen in a window process it starts on demand (`sesame --service-face`), which ends by itself
/// when the user is done. Until then the service carries no GTK and no WebKit. A window that
/// cannot be started, or that ends with requests open, answers them as dismissed: no token.
@MainActor
public final class FaceClient: AccessQuestioner, ServiceSignIn, BrokerSignIn {
    private let arguments: [String]
    private let store: AccountStore
    private let trace: FlowTrace
    private var child: ChildProcess?
    private var pending: [Int: CheckedContinuation<FaceReply?, Never>] = [:]
    private var nextID = 1
    /// What each reply of the running window must carry (a new one per window).
    private var token = Secret("")

    /// A client that starts `arguments` (the `sesame` executable, ``FaceProtocol/flag`` and the
    /// service's own settings options) when the user must be asked; sign-ins are read back from
    /// `store`, which shares its storage with the window's.
    public init(arguments: [String], store: AccountStore, trace: FlowTrace) {
        self.arguments = arguments
        self.store = store
        self.trace = trace
        // What the service does for programs shows in the window's flow inspector while it is up.
        trace.observe { [weak self] event in
            guard Self.isShown(event) else { return }
            MainActor.assumeIsolated { self?.forward(event) }
        }
    }

    /// The service's events the window's inspector shows: the broker's and the account service's.
    static func isShown(_ event: FlowTrace.Event) -> Bool {
        ["broker-", "service-", "access-"].contains { event.name.hasPrefix($0) }
    }

    private func forward(_ event: FlowTrace.Event) {
        var request = FaceRequest(id: 0, kind: .event)
        request.event = event.name
        request.fields = event.fields.map { [$0.0, $0.1] }
        child?.channel.send(request.line)
    }

    /// Whether the window process runs now.
    public var isRunning: Bool { child != nil }

    public func ask(_ request: AccessRequest) async -> AccessAnswer? {
        await send(FaceRequest(id: 0, kind: .ask, question: request))?.answer
    }

    public func serviceSignIn(accountType: String) async -> Account? {
        guard let reply = await send(FaceRequest(id: 0, kind: .signIn, accountType: accountType)) else { return nil }
        return try? await account(reply, accountType: accountType)
    }

    public func brokerSignIn(
        accountType: String, program: ProgramIdentity, parameters: [String: String]
    ) async throws(AccountStoreError)
        -> Account
    {
        guard let configuration = await store.configuration(forAccountType: accountType) else {
            throw AccountStoreError(.unknownAccountType, "No sign-in is configured for \(accountType).")
        }
        let request = FaceRequest(
            id: 0, kind: .brokerSignIn, accountType: accountType, program: program, parameters: parameters,
            app: FaceAppConfiguration(configuration))
        guard let reply = await send(request) else {
            throw AccountStoreError(.cancelled, "Sesame's window closed before the sign-in finished.")
        }
        if let error = reply.error { throw error.storeError }
        return try await account(reply, accountType: accountType)
    }

    public func cancelBrokerSignIn() {
        child?.channel.send(FaceRequest(id: 0, kind: .cancel).line)
    }

    // MARK: The window process

    /// Sends `request` (numbered here) and waits for its reply; nil when the window could not be
    /// started or ended first.
    private func send(_ request: FaceRequest) async -> FaceReply? {
        guard let child = start() else { return nil }
        var numbered = request
        numbered.id = nextID
        nextID += 1
        return await withCheckedContinuation { continuation in
            pending[numbered.id] = continuation
            if !child.channel.send(numbered.line) { ended(child) }
        }
    }

    private func start() -> ChildProcess? {
        if let child { return child }
        do {
            let started = try ChildProcess(arguments: arguments)
            token = Secret.random(byteCount: 32)
            var hello = FaceRequest(id: 0, kind: .hello)
            hello.token = token.revealed
            started.channel.send(hello.line)
            started.channel.onLine = { [weak self] line in self?.received(line) }
            started.channel.onForeign = { [weak self] pid in
                self?.trace.record("service-window-foreign", [("pid", String(pid))])
            }
            started.channel.onClose = { [weak self, weak started] in if let started { self?.ended(started) } }
            started.onExit = { [weak self, weak started] _ in if let started { self?.ended(started) } }
            child = started
            // What happened before it started, for its inspector.
            for event in trace.events.filter(Self.isShown).suffix(30) { forward(event) }
            trace.record("service-window-started", [("pid", String(started.processID))])
            return started
        } catch {
            trace.record("service-window-failed", [("error", error.message)])
            return nil
        }
    }

    private func received(_ line: String) {
        guard let reply = FaceReply(line: line), token.matches(reply.token ?? ""),
            let continuation = pending.removeValue(forKey: reply.id)
        else {
            trace.record("service-window-unreadable", [("bytes", String(line.utf8.count))])
            return
        }
        continuation.resume(returning: reply)
    }

    /// The window ended: what it left open is answered as dismissed.
    private func ended(_ process: ChildProcess) {
        guard child === process else { return }
        child = nil
        process.channel.close()
        trace.record("service-window-ended", [("open", String(pending.count))])
        let open = pending
        pending = [:]
        for continuation in open.values { continuation.resume(returning: nil) }
    }

    /// The account a sign-in reply names, from the shared storage.
    private func account(_ reply: FaceReply, accountType: String) async throws(AccountStoreError) -> Account {
        if let error = reply.error { throw error.storeError }
        let accounts: [Account]
        do {
            accounts = try await store.accounts(ofType: accountType)
        } catch {
            throw error as? AccountStoreError ?? AccountStoreError(.invalidResponse, "Sesame could not read the sign-in it just stored.")
        }
        guard let homeAccountID = reply.homeAccountID, let account = accounts.first(where: { $0.homeAccountID == homeAccountID }) else {
            throw AccountStoreError(.cancelled, "The sign-in was closed.")
        }
        return account
    }
}
