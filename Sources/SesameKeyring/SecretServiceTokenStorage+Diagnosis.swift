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
            let location: TokenStorageLocation =
                (storage as? FileTokenStorage).map { .files($0.directory.path) } ?? .secretService(collection: defaultCollectionLabel())
            findings.append(Diagnosis.Finding(.tokenStorage, .ok(.storage(location))))
        } catch let error as TokenStorageError {
            findings.append(Diagnosis.Finding(.tokenStorage, .problem(.storage(reason: error.reason))))
        } catch {
            findings.append(Diagnosis.Finding(.tokenStorage, .problem(.storage(reason: "\(error)"))))
        }
        return findings
    }

    /// The name of the collection Sesame's items go to (the `default` alias), if it has one.
    static func defaultCollectionLabel() -> String? {
        var result = sesame_secret_default_collection_label()
        defer { sesame_secret_result_free(&result) }
        guard result.ok != 0, let label = result.secret else { return nil }
        return String(cString: label)
    }
}
