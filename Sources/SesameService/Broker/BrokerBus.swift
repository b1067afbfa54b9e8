import SesameGIO

/// `com.microsoft.identity.broker1` on the session bus: the bus side of ``BrokerService``. The
/// name is taken only when nobody owns it — Microsoft's broker or Himmelblau keep it, and Sesame
/// then serves only its own interface (`sesame doctor` says who owns it). Callers are identified
/// as for `org.sesame.Accounts1`, by the same ``CallerRegistry``; a caller the system cannot
/// identify gets the broker's error shape, as does every malformed request.
@MainActor
public final class BrokerBus {
    /// The service the calls go to.
    public let broker: BrokerService
    private let callers: CallerRegistry
    private let trace: FlowTrace
    private var bus: DBusService?

    /// Starts owning the broker's name (queued behind an owner already there, never replacing it).
    public init(broker: BrokerService, callers: CallerRegistry, trace: FlowTrace) {
        self.broker = broker
        self.callers = callers
        self.trace = trace
        do {
            bus = try DBusService(
                name: BrokerProtocol.busName, path: BrokerProtocol.objectPath, interface: BrokerProtocol.interfaceName,
                introspectionXML: BrokerProtocol.introspectionXML
            ) { [weak self] call in self?.handle(call) }
        } catch {
            trace.record("broker-failed", [("error", error.message)])
        }
        bus?.onNameAcquired = { trace.record("broker-started", [("name", BrokerProtocol.busName)]) }
        bus?.onNameLost = { trace.record("broker-not-started", [("name", BrokerProtocol.busName)]) }
    }

    /// Whether this process is the session's identity broker.
    public var isServing: Bool { bus?.ownsName ?? false }

    /// Gives the name back.
    public func stop() {
        bus?.stop()
        bus = nil
    }

    private func handle(_ call: DBusMethodCall) {
        Task {
            let arguments = call.arguments.compactMap(\.string)
            guard arguments.count == 3, call.arguments.count == 3 else {
                call.reply([.string(BrokerFailure.contract("a method takes three strings").reply)])
                return
            }
            let (caller, changed) = await callers.identify(call)
            guard let caller else {
                let reason =
                    changed ? "The calling program changed since its first call." : "Sesame could not tell which program is calling."
                call.reply([.string(BrokerFailure(.unexpected, tag: 0x5E5A_0110, reason).reply)])
                return
            }
            let program = caller.program
            let request: BrokerRequest
            do throws(BrokerFailure) {
                request = try BrokerRequest.parse(
                    method: call.method, protocolVersion: arguments[0], correlationID: arguments[1], request: arguments[2])
            } catch {
                trace.record("broker-call", [("method", call.method), ("program", program.name), ("refused", "contract")])
                call.reply([.string(error.reply)])
                return
            }
            trace.record("broker-call", [("method", call.method), ("program", program.name), ("clientId", request.clientID ?? "")])
            let reply = await broker.answer(request, from: program, context: caller.context)
            // The answer goes to the process that asked, running what it ran then.
            guard callers.isStill(call) else {
                call.reply([
                    .string(BrokerFailure(.unexpected, tag: 0x5E5A_0110, "The calling program changed since its first call.").reply)
                ])
                return
            }
            call.reply([.string(reply)])
        }
    }
}

extension BrokerRequest {
    /// The app the request is for, if it names one.
    var clientID: String? {
        switch self {
        case .accounts(let clientID), .removeAccount(let clientID, _): clientID
        case .silent(let parameters), .interactive(let parameters): parameters.clientID
        default: nil
        }
    }
}
