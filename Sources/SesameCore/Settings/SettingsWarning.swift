/// A key of a settings file that its shape does not read: a misspelling (`clientid`), a key of
/// another sample's shape, or one Sesame has never read. Sesame ignores it, so the file does not
/// say what the user thinks it says; the load still succeeds.
public struct SettingsWarning: Sendable, Hashable, CustomStringConvertible {
    /// The settings file's path as given.
    public let file: String
    /// The key as the file spells it.
    public let key: String
    /// The shape the file was read as; it decides which keys are read.
    public let shape: SampleSettings.Shape
    /// The keys the shape reads (every spelling), in the order it reads them: what a suggestion
    /// is drawn from.
    let readKeys: [String]

    init(file: String, key: String, shape: SampleSettings.Shape, readKeys: [String]) {
        self.file = file
        self.key = key
        self.shape = shape
        self.readKeys = readKeys
    }

    /// The key the shape reads that `key` probably meant: the same letters in another case
    /// (`clientid` → `clientID`), or one or two letters off (`discoveryUrll`). `nil` when none
    /// is that close. Worked out when asked, so that a file of thousands of stray keys costs
    /// nothing until someone reads the warnings.
    public var suggestion: String? { Self.suggestion(for: key, among: readKeys) }

    /// The key as a person may be shown it: control and format characters escaped, cut after 64
    /// characters (the key comes from a file, which may be anyone's).
    public var printableKey: String { Self.printable(key) }

    /// The warning in one sentence, without the file: what a window or a log line shows after
    /// naming the file. English, as Core's descriptions are.
    public var sentence: String {
        let quoted = "\"\(Self.printable(key))\""
        let subject = "\(quoted) is not a key \(shape.settingsFileName) reads; Sesame ignores it"
        guard let suggestion else { return subject + "." }
        return subject + ": did you mean \"\(suggestion)\"?"
    }

    /// `<file>: <sentence>`, as `sesame` prints it after `sesame: warning: ` (the file's name
    /// is its maker's choice: its control characters spelled out too).
    public var description: String { "\(Self.printable(file, limit: Self.longestPathShown)): \(sentence)" }

    /// The longest file name shown whole (Linux's `PATH_MAX`).
    static let longestPathShown = 4096

    /// The longest key a suggestion is looked for (longer ones are no typo of a known key).
    static let longestKeyCompared = 64

    /// The closest of `candidates` to `key`: a case-insensitive match first, else the smallest
    /// edit distance within the bound (1 for keys under 6 letters, else 2), the earlier
    /// candidate on a tie. `nil` when `key` is one of them exactly or none is close.
    static func suggestion(for key: String, among candidates: [String]) -> String? {
        guard !candidates.contains(key), key.count <= longestKeyCompared else { return nil }
        let lowered = Array(key.lowercased())
        if let sameLetters = candidates.first(where: { $0.lowercased() == key.lowercased() }) { return sameLetters }
        let bound = lowered.count < 6 ? 1 : 2
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = Array(candidate.lowercased())
            guard abs(other.count - lowered.count) <= bound else { continue }
            let distance = editDistance(lowered, other, bound: bound)
            if distance <= bound, distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.candidate
    }

    /// Levenshtein's distance, stopping early once every path is over `bound` (then `bound + 1`).
    private static func editDistance(_ a: [Character], _ b: [Character], bound: Int) -> Int {
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            var rowMinimum = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                rowMinimum = min(rowMinimum, current[j])
            }
            if rowMinimum > bound { return bound + 1 }
            swap(&previous, &current)
        }
        return previous[b.count]
    }

    /// A key (or a file's name) as a terminal may show it: control characters (an escape
    /// sequence in a hostile file) written as `\u{…}`, and at most `limit` characters.
    static func printable(_ key: String, limit: Int = longestKeyCompared) -> String {
        var shown = ""
        for scalar in key.unicodeScalars.prefix(limit) {
            if scalar.properties.generalCategory == .control || scalar.properties.generalCategory == .format {
                shown += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return key.unicodeScalars.count > limit ? shown + "…" : shown
    }
}
