import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameGIO

/// The commands' way to the account service (`org.sesame.Sesame`). `sesame accounts` and
/// `signout`, and `sesame token` typed by a person, ask it when a Sesame window or `sesame
/// --service` runs — one store, one refresh, and the window sees a sign-out at once — and open
/// the store themselves when none runs. `sesame token` run by a program (a mail program's
/// password command, a script) always goes through it, starting it by D-Bus activation: the
/// service is what asks the user about that program, so the answer is the same whether or not a
/// window happens to run. Sesame's own executable is never asked about: it could read the store
/// anyway.
enum ServiceClient {
    /// What the service answered, or why it did not.
    enum Answer {
        case answered([DBusValue])
        case failed(DBusError)
        /// Nobody owns the name (and it was not to be started, or could not be), or the service
        /// has no settings for the account type asked about.
        case notRunning
        /// There is no session bus (an SSH login, cron): nobody can be asked.
        case noBus
    }

    /// How long the service may take before it says it is asking the user.
    static let timeout: Duration = .seconds(120)

    /// Calls `method` on the service; `startService`: let D-Bus activation start it when none
    /// runs. `asking` is told (program, user name) when the service asks the user about this
    /// request; the call then waits for the answer however long it takes.
    static func call(
        _ method: String, _ arguments: [DBusValue], startService: Bool = false, asking: (@Sendable (String, String) -> Void)? = nil
    ) -> Answer {
        let answer: Answer = MainActor.assumeIsolated { onMainThread(method, arguments, startService: startService, asking: asking) }
        return answer
    }

    @MainActor
    private static func onMainThread(
        _ method: String, _ arguments: [DBusValue], startService: Bool, asking: (@Sendable (String, String) -> Void)?
    ) -> Answer {
        guard let client = DBusClient() else { return .noBus }
        do {
            let values = try client.call(
                "org.sesame.Sesame", path: "/org/sesame/Sesame", interface: "org.sesame.Accounts1", method: method,
                arguments: arguments, startService: startService, timeout: timeout, signal: "Asking"
            ) { values in
                let texts = values.compactMap(\.string)
                if texts.count == 2 { asking?(texts[0], texts[1]) }
            }
            return .answered(values)
        } catch {
            if error.isNoService || error.name == "org.sesame.Accounts1.Error.UnknownAccountType"
                || error.name == "org.freedesktop.DBus.Error.Spawn.ServiceNotFound"
            {
                return .notRunning
            }
            return .failed(error)
        }
    }

    /// The error's kind (`AccessDenied`, `InteractionRequired`, `NoSuchAccount`, …).
    static func kind(_ error: DBusError) -> String {
        error.name.hasPrefix("org.sesame.Accounts1.Error.") ? String(error.name.dropFirst("org.sesame.Accounts1.Error.".count)) : ""
    }

    /// The command's exit status for the service's error (``ExitStatus``).
    static func exitStatus(_ error: DBusError) -> Int32 {
        switch kind(error) {
        case "KeyringLocked": ExitStatus.keyringLocked
        case "NoKeyring": ExitStatus.noKeyring
        case "DiskFull": ExitStatus.diskFull
        case "ReadOnlyStorage": ExitStatus.readOnly
        case "InteractionRequired", "NoSuchAccount": ExitStatus.signInNeeded
        case "" where error.name == "org.freedesktop.DBus.Error.NoReply": ExitStatus.serviceEnded
        default: ExitStatus.failure
        }
    }

    /// What to tell the person: the service's own sentence, or what the bus's error means for them.
    static func sentence(_ error: DBusError) -> String {
        if !kind(error).isEmpty { return error.message }
        switch error.name {
        case "org.freedesktop.DBus.Error.NoReply":
            return
                "Sesame's account service ended before it answered. Run the command again; `sesame doctor` says whether the service runs."
        case "org.freedesktop.DBus.Error.Timeout", "org.freedesktop.DBus.Error.TimedOut":
            return
                "Sesame's account service did not answer within \(timeout.components.seconds) s. `sesame doctor` says whether it runs."
        case let name where name.hasPrefix("org.freedesktop.DBus.Error.Spawn."):
            return "Sesame's account service could not be started (\(error.message)). `sesame doctor` says why."
        default:
            return "Sesame's account service failed: \(error.message)"
        }
    }
}
