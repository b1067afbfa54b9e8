import FoundationEssentials
import SesameService
import SesameSystem

/// What the access question says, in the user's language, made from a request the way a security
/// question must be made: the program's name escaped and isolated (``DisplayText``), its full path
/// instead of its name when another program the user knows has the same name, every permission
/// the token would carry with the new ones marked, and a warning for a program Sesame cannot
/// verify. UI-free, so the words are tested without a window.
public struct AccessQuestionText: Sendable, Equatable {
    /// The question: "Allow ⁨tool⁩ to use alex@contoso.com?".
    public let heading: String
    /// What the token would let the program do, one permission a line ("User.Read", "Mail.Read
    /// (new)"), or what it asks for when the token is not known yet.
    public let permissions: [String]
    /// Where the program is: "The program /usr/bin/tool", "The Flatpak app org.example.App".
    public private(set) var origin: String
    /// For an unverified program, why it cannot be remembered; nil otherwise.
    public let warning: String?
    /// Whether "Always allow" is offered (never for an unverified program).
    public let offersAlways: Bool

    /// The text for `request`; `knownPrograms` are the other programs the user has seen (kept
    /// decisions, questions waiting), to tell two programs of one name apart.
    public init(_ request: AccessRequest, knownPrograms: [ProgramIdentity] = []) {
        let program = request.program
        let sameName = knownPrograms.contains { $0 != program && $0.name == program.name }
        let shownName = DisplayText.isolated(sameName ? program.id : program.name)
        heading = String(formatting: L("Allow %@ to use %@?"), shownName, DisplayText.isolated(request.username))
        let new = Set(request.newScopes.map { $0.lowercased() })
        let growth = !request.previouslyAllowed.isEmpty
        permissions =
            request.scopes.isEmpty
            ? [L("Its usual permissions")]
            : request.scopes.map { scope in
                let shown = DisplayText.escaped(scope)
                return growth && new.contains(scope.lowercased()) ? String(formatting: L("%@ (new)"), shown) : shown
            }
        let path = DisplayText.escaped(program.id)
        switch program.kind {
        case .executable:
            origin =
                program.startedBy.map { String(formatting: L("The program %@, started by %@"), path, DisplayText.escaped($0)) }
                ?? String(formatting: L("The program %@"), path)
            warning = nil
        case .flatpak:
            origin = String(formatting: L("The Flatpak app %@"), path)
            warning = nil
        case .unverified:
            origin = String(formatting: L("An unverified program that claims to be %@"), path)
            warning = L(
                "Sesame cannot tell which program this is: it runs in a sandbox that is not a Flatpak app's. It is asked every time."
            )
        }
        offersAlways = program.isVerified
        // What Always covers, in words, where it is more than the program itself: the kernel
        // tells Sesame which executable asks, not which script an interpreter runs or which
        // command a program ran.
        let shownProgram = DisplayText.isolated(program.name)
        if request.context.ranCommand, program.reach == .itself {
            origin +=
                "\n"
                + String(formatting: L("%@ asked by running a command of its settings: Always covers every command it runs."), shownProgram)
        }
        switch program.reach {
        case .interpreter:
            if let browser = program.startedBy.map({ DisplayText.isolated(URL(filePath: $0).lastPathComponent) }) {
                // An extension's native messaging host: the browser that started it is part of
                // who it is (the kernel names the parent's executable), and of what Always covers.
                origin +=
                    "\n"
                    + String(
                        formatting: L(
                            "%@ was started by %@, a web browser, for one of its extensions: Always covers the programs it runs when %@ starts it, not those started otherwise."
                        ), DisplayText.isolated(program.executableName), browser, browser)
            } else {
                origin +=
                    "\n"
                    + String(
                        formatting: L("%@ runs programs it is given: Always covers every program it runs, not only this one."),
                        shownProgram)
            }
            if !request.context.claimedScript.isEmpty {
                origin +=
                    "\n"
                    + String(
                        formatting: L("It says it runs %@ (its own words: Sesame cannot check them)."),
                        DisplayText.isolated(request.context.claimedScript))
            }
        case .shell:
            origin += "\n" + String(formatting: L("%@ is a shell: Always covers every command it runs."), shownProgram)
        case .itself: break
        }
        if !request.app.isEmpty {
            // A program signing in as its own app (the identity broker): which registration the
            // organization sees, as Entra's sign-in logs name it.
            origin += "\n" + String(formatting: L("It signs in as the app %@."), DisplayText.escaped(request.app))
        }
    }
}
