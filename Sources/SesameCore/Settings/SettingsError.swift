/// A settings file that cannot be used, with the file and the key to fix.
public struct SettingsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong.
    public enum Problem: Sendable, Equatable {
        /// The file could not be read.
        case unreadable(reason: String)
        /// The file is not a property list whose top level is a dictionary.
        case notAPropertyList
        /// A required key is absent (or empty).
        case missingKey
        /// A key is present but its value has the wrong type or form.
        case malformedValue(expected: String)
        /// The keys do not match any of the seeds' settings shapes.
        case unknownShape
    }

    /// The settings file's path as given.
    public let file: String
    /// The key to fix; `nil` when the problem is the file as a whole. Where a key has two
    /// spellings in the seeds (`clientId`/`clientID`), both are named.
    public let key: String?
    /// What is wrong with it.
    public let problem: Problem
    /// For a missing key, the key the file has that looks like a misspelling of it (`clientid`
    /// for `clientID`), if any.
    public let nearMiss: NearMiss?

    /// A key of the file that is probably a misspelling of the missing one.
    public struct NearMiss: Sendable, Equatable {
        /// The key as the file spells it (`clientid`).
        public let found: String
        /// The key the shape reads (`clientID`).
        public let meant: String

        /// A near miss; see each property.
        public init(found: String, meant: String) {
            self.found = found
            self.meant = meant
        }
    }

    /// An error; see each property.
    public init(file: String, key: String?, problem: Problem, nearMiss: NearMiss? = nil) {
        self.file = file
        self.key = key
        self.problem = problem
        self.nearMiss = nearMiss
    }

    public var description: String {
        // The file's name is its maker's choice: an escape sequence in it is spelled out.
        let shownFile = SettingsWarning.printable(file, limit: SettingsWarning.longestPathShown)
        let subject = key.map { "\(shownFile): key \"\($0)\"" } ?? shownFile
        switch problem {
        case .unreadable(let reason): return "\(subject) cannot be read: \(reason)"
        case .notAPropertyList: return "\(subject) is not a property list with a dictionary at the top level"
        case .missingKey:
            if let nearMiss {
                return "\(subject) is missing or empty; the file has \"\(SettingsWarning.printable(nearMiss.found))\": "
                    + "did you mean \"\(nearMiss.meant)\"?"
            }
            return "\(subject) is missing or empty; add it to the settings file"
        case .malformedValue(let expected): return "\(subject) is malformed: expected \(expected)"
        case .unknownShape:
            return "\(subject) matches none of the known settings shapes (v2.0: clientId + redirectUri; "
                + "B2C: accountIdentifier + authURL + tokenURL; MSAL: clientId + authority)"
        }
    }
}
