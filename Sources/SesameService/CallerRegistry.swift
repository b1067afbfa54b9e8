import SesameGIO
import SesameSystem

/// Who is calling, for each bus connection: identified at its first call from the bus daemon (its
/// process and user) and the kernel (``ProcessIdentification``: the executable, a verified Flatpak
/// app, or an unverified program in a mount namespace of its own) — never from its arguments —
/// and checked again on every later call: the same process (its start time) running the same
/// executable. Both of Sesame's interfaces (`org.sesame.Accounts1` and the identity broker's) ask
/// it, so a program is the same program to both.
@MainActor
public final class CallerRegistry {
    private var callers: [String: Caller] = [:]
    private var firstCalls: [String: Task<Caller?, Never>] = [:]
    private let identification: ProcessIdentification
    private let trace: FlowTrace
    /// Whether a program is one of Sesame's own commands (whose requester is looked past).
    private let isTrusted: @MainActor (ProgramIdentity) -> Bool

    /// A registry identifying callers with `identification`; `isTrusted`: Sesame's own programs.
    public init(identification: ProcessIdentification, trace: FlowTrace, isTrusted: @escaping @MainActor (ProgramIdentity) -> Bool) {
        self.identification = identification
        self.trace = trace
        self.isTrusted = isTrusted
    }

    /// The caller behind `call`; nil when the system cannot tell, or when the caller changed
    /// since its first call (`changed` is then true).
    func identify(_ call: DBusMethodCall) async -> (caller: Caller?, changed: Bool) {
        if let known = callers[call.sender] {
            // The process that made the first call, still running the executable it ran then.
            guard isUnchanged(known) else { return (nil, true) }
            return (known, false)
        }
        // A connection's first calls may come together: they share one identification.
        let identifying =
            firstCalls[call.sender]
            ?? Task { [identification, isTrusted] in
                guard let credentials = await call.callerCredentials(), credentials.userID == Posix.userID,
                    let caller = identification.caller(credentials.processID)
                else { return nil }
                // `sesame token` run by a mail program (its `PassCmd`): the user decides about that
                // program; typed at a terminal, the command is the person's own.
                guard isTrusted(caller.program), let requester = identification.tokenCommandRequester(caller.processID) else {
                    return caller
                }
                switch requester {
                case .person: return caller
                case .program(let program):
                    return Caller(
                        program: program.program, processID: caller.processID, fingerprint: caller.fingerprint, context: program.context)
                case .unknown: return nil
                }
            }
        firstCalls[call.sender] = identifying
        let caller = await identifying.value
        firstCalls[call.sender] = nil
        guard let caller else { return (nil, false) }
        if callers[call.sender] == nil {
            if callers.count > 4096 { callers.removeAll() }
            callers[call.sender] = caller
            if !caller.program.isVerified { trace.record("service-caller-unverified", [("program", caller.program.name)]) }
        }
        return (caller, false)
    }

    /// Whether the connection's caller is still the process that made its first call, running
    /// the executable it ran then: asked again when an answer is ready, so a program that `exec`s
    /// another while the user is asked does not hand the token to it.
    func isStill(_ call: DBusMethodCall) -> Bool {
        guard let known = callers[call.sender] else { return false }
        return isUnchanged(known)
    }

    private func isUnchanged(_ known: Caller) -> Bool {
        guard identification.fingerprint(known.processID) == known.fingerprint else {
            trace.record("service-caller-changed", [("program", known.program.name)])
            return false
        }
        return true
    }
}
