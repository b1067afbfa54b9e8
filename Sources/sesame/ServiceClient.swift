import FoundationEssentials
import SesameCore
import SesameGIO
import SesameGtk

/// The commands' way to the running account service (`org.sesame.Sesame`): when a Sesame window
/// or `sesame --service` runs, `sesame token`, `accounts` and `signout` ask it — one store, one
/// refresh, and the window sees a sign-out at once — and only when none runs do they open the
/// store themselves. Sesame's own executable is never asked about: it could read the store anyway.
enum ServiceClient {
    /// What the service answered, or that it does not run (or does not know the account type).
    enum Answer {
        case answered([DBusValue])
        case failed(DBusError)
        case notRunning
    }

    /// Calls `method` on the running service; `.notRunning` when none runs (no bus, nobody owns
    /// the name — never starting one), or when it has no settings for the type asked about.
    static func call(_ method: String, _ arguments: [DBusValue]) -> Answer {
        let answer: Answer = MainActor.assumeIsolated { onMainThread(method, arguments) }
        return answer
    }

    @MainActor
    private static func onMainThread(_ method: String, _ arguments: [DBusValue]) -> Answer {
        guard let client = DBusClient() else { return .notRunning }
        do {
            let values = try client.call(
                "org.sesame.Sesame", path: "/org/sesame/Sesame", interface: "org.sesame.Accounts1", method: method,
                arguments: arguments, startService: false, timeout: .seconds(120))
            return .answered(values)
        } catch {
            if error.isNoService || error.name == "org.sesame.Accounts1.Error.UnknownAccountType" { return .notRunning }
            return .failed(error)
        }
    }

    /// The error's kind (`AccessDenied`, `InteractionRequired`, `NoSuchAccount`, …).
    static func kind(_ error: DBusError) -> String {
        error.name.hasPrefix("org.sesame.Accounts1.Error.") ? String(error.name.dropFirst("org.sesame.Accounts1.Error.".count)) : ""
    }
}
