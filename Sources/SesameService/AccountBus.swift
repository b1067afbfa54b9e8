import FoundationEssentials
import SesameCore
import SesameGIO
import SesameSystem

/// `org.sesame.Accounts1` on the session bus, under the name `org.sesame.Sesame`: the bus side of
/// ``AccountService``. Each connection's caller is identified at its first call from the bus (its
/// process and user, from the bus daemon) and the kernel (``ProcessIdentification``: the
/// executable, a verified Flatpak app, or an unverified program in a mount namespace of its own)
/// — never from its arguments — and checked again on every later call: the same process (its
/// start time) running the same executable. docs/DBUS.md is the interface's documentation;
/// ``introspectionXML`` its definition.
@MainActor
public final class AccountBus {
    /// The well-known name.
    public static let busName = "org.sesame.Sesame"
    /// The object's path.
    public static let objectPath = "/org/sesame/Sesame"
    /// The interface: its version is in its name (a change that breaks a caller is `Accounts2`).
    public static let interfaceName = "org.sesame.Accounts1"

    /// The interface, as `gdbus introspect` shows it.
    public static let introspectionXML = """
        <node>
          <interface name="org.sesame.Accounts1">
            <method name="ListAccounts">
              <arg name="accounts" type="aa{sv}" direction="out"/>
            </method>
            <method name="GetAccessToken">
              <arg name="account_type" type="s" direction="in"/>
              <arg name="username" type="s" direction="in"/>
              <arg name="scopes" type="as" direction="in"/>
              <arg name="access_token" type="s" direction="out"/>
              <arg name="expires_at" type="x" direction="out"/>
            </method>
            <method name="SignIn">
              <arg name="account_type" type="s" direction="in"/>
              <arg name="account" type="a{sv}" direction="out"/>
            </method>
            <method name="SignOut">
              <arg name="account_type" type="s" direction="in"/>
              <arg name="username" type="s" direction="in"/>
            </method>
            <signal name="Asking">
              <arg name="program" type="s"/>
              <arg name="username" type="s"/>
            </signal>
          </interface>
        </node>
        """

    /// The service the calls go to.
    public let service: AccountService
    private let trace: FlowTrace
    private var bus: DBusService?
    /// Who each connection is, as identified at its first call (shared with the broker).
    public let callers: CallerRegistry

    /// Starts owning the name. Without a session bus, or with another Sesame owning the name, the
    /// window simply serves nobody (``isServing`` stays false).
    public init(service: AccountService, trace: FlowTrace, identification: ProcessIdentification = ProcessIdentification()) {
        self.service = service
        self.trace = trace
        callers = CallerRegistry(identification: identification, trace: trace) { [weak service] in service?.isTrusted($0) ?? false }
        do {
            bus = try DBusService(
                name: Self.busName, path: Self.objectPath, interface: Self.interfaceName, introspectionXML: Self.introspectionXML
            ) { [weak self] call in self?.handle(call) }
        } catch {
            trace.record("service-failed", [("error", error.message)])
        }
        bus?.onNameAcquired = { trace.record("service-started", [("name", Self.busName)]) }
        bus?.onNameLost = { [weak self] in
            trace.record("service-not-started", [("name", Self.busName)])
            self?.onNameLost?()
        }
    }

    /// Called when the name could not be had or was lost (another Sesame has it, or the bus went).
    public var onNameLost: (() -> Void)?

    /// Whether this process answers on the bus.
    public var isServing: Bool { bus?.ownsName ?? false }

    /// Gives the name back.
    public func stop() {
        bus?.stop()
        bus = nil
    }

    private func handle(_ call: DBusMethodCall) {
        Task {
            // SIGTERM during its refresh ends the service once the caller has its answer.
            await Termination.shared.answering {
                do throws(AccountServiceError) {
                    let caller = try await identify(call)
                    let answer = try await answer(call, from: caller)
                    // The answer goes to the process that asked, running what it ran then.
                    guard callers.isStill(call) else { throw Self.changed }
                    call.reply(answer)
                } catch {
                    call.fail(name: error.name, message: error.message)
                }
            }
        }
    }

    private static let changed = AccountServiceError(.unknownCaller, "The calling program changed since its first call; connect again.")

    private func identify(_ call: DBusMethodCall) async throws(AccountServiceError) -> Caller {
        let (caller, changed) = await callers.identify(call)
        if changed { throw Self.changed }
        guard let caller else { throw AccountServiceError(.unknownCaller, "Sesame could not tell which program is calling.") }
        return caller
    }

    private func answer(_ call: DBusMethodCall, from caller: Caller) async throws(AccountServiceError) -> [DBusValue] {
        let arguments = call.arguments
        let (program, context) = (caller.program, caller.context)
        switch (call.method, arguments.count) {
        case ("ListAccounts", 0):
            return [.dictionaries(try await service.accounts(for: program).map(Self.describe))]
        case ("GetAccessToken", 3):
            // The caller alone hears that the user is being asked (`sesame token` says it waits).
            let token = try await service.accessToken(
                for: program, context: context, accountType: arguments[0].string ?? "", username: arguments[1].string ?? "",
                scopes: arguments[2].strings ?? []
            ) { request in call.notify("Asking", [.string(request.program.name), .string(request.username)]) }
            return [.string(token.secret.revealed), .int64(Int64(token.expiresOn.timeIntervalSince1970))]
        case ("SignIn", 1):
            return [
                .dictionary(Self.describe(try await service.signIn(for: program, context: context, accountType: arguments[0].string ?? "")))
            ]
        case ("SignOut", 2):
            try await service.signOut(for: program, accountType: arguments[0].string ?? "", username: arguments[1].string ?? "")
            return []
        default:
            throw AccountServiceError(.invalidArgument, "No such method.")
        }
    }

    private static func describe(_ account: ServiceAccount) -> [(String, DBusValue)] {
        [
            ("account_type", .string(account.accountType)), ("username", .string(account.username)),
            ("display_name", .string(account.displayName)), ("tenant", .string(account.tenant)),
            ("home_account_id", .string(account.homeAccountID)), ("needs_sign_in", .bool(account.needsSignIn)),
        ]
    }
}
