import CLibSecret
import FoundationEssentials
import SesameCore

extension SecretServiceTokenStorage {
    /// What `sesame doctor` says about storage: whether a Secret Service answers on the session
    /// bus, and where this user's sign-ins are kept — the store every command would choose
    /// (``chosen(environment:recording:)``), without recording a first choice.
    public static func diagnosis(environment: [String: String] = ProcessInfo.processInfo.environment) -> [Diagnosis.Finding] {
        let answers = isAvailable()
        var findings = [Diagnosis.Finding(.keyring, .ok(.keyring(answers: answers)))]
        do {
            let storage = try chosen(environment: environment, recording: false).storage
            if let files = storage as? FileTokenStorage {
                findings.append(Diagnosis.Finding(.tokenStorage, .ok(.storage(.files(files.directory.path)))))
            } else if !answers {
                findings.append(
                    Diagnosis.Finding(
                        .tokenStorage,
                        .problem(
                            .storage(
                                reason: "your sign-ins are in the desktop keyring, which does not answer here (no session bus or "
                                    + "keyring daemon); run sesame in your desktop session"))))
            } else {
                let collection = defaultCollection()
                if collection.locked {
                    // It answers, but nothing in it can be read: the sign-ins are there, behind the lock.
                    let name = collection.label.map { "“\($0)”" } ?? "default"
                    findings.append(
                        Diagnosis.Finding(
                            .tokenStorage,
                            .problem(
                                .storage(
                                    reason: "your sign-ins are in the keyring's \(name) collection, which is locked: Sesame cannot read "
                                        + "them until you unlock it (log in to the desktop again, or unlock it in Passwords and Keys); "
                                        + "nothing is lost"))))
                } else {
                    findings.append(Diagnosis.Finding(.tokenStorage, .ok(.storage(.secretService(collection: collection.label)))))
                }
            }
        } catch let error as TokenStorageError {
            findings.append(Diagnosis.Finding(.tokenStorage, .problem(.storage(reason: error.reason))))
        } catch {
            findings.append(Diagnosis.Finding(.tokenStorage, .problem(.storage(reason: "\(error)"))))
        }
        return findings
    }

    /// The name of the collection Sesame's items go to (the `default` alias), if it has one, and
    /// whether it is locked.
    static func defaultCollection() -> (label: String?, locked: Bool) {
        var result = sesame_secret_default_collection_label()
        defer { sesame_secret_result_free(&result) }
        guard result.ok != 0, let label = result.secret else { return (nil, false) }
        return (String(cString: label), result.locked != 0)
    }
}
