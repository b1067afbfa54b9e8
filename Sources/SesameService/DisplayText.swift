import FoundationEssentials

/// Text another program chose — its executable's path, the scopes it asks for — made safe to show
/// in a security question. Characters that are invisible or move other text (controls, Unicode
/// format characters such as the bidirectional overrides U+202E and the zero-width ones, line and
/// paragraph separators, private-use and unassigned code points, spaces other than U+0020, Hangul
/// fillers) are shown as `\u{202E}`, so "‮lanimret-emong" cannot pass for another program's name;
/// ``isolated(_:)`` also keeps a name's direction from leaking into the sentence around it
/// (U+2068 FIRST STRONG ISOLATE … U+2069 POP DIRECTIONAL ISOLATE, as GNOME's portals do).
public enum DisplayText {
    /// Whether `scalar` is one of the characters ``escaped(_:)`` spells out.
    public static func isHidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        case .spaceSeparator:
            return scalar != " "
        default:
            return fillers.contains(scalar.value)
        }
    }

    /// Code points that draw nothing though Unicode calls them letters.
    private static let fillers: Set<UInt32> = [0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800]

    /// Whether `text` holds a character ``escaped(_:)`` would spell out.
    public static func hasHiddenCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: isHidden)
    }

    /// `text` with every hidden character spelled out as `\u{XXXX}` (and `\` as `\\`, so the
    /// spelling cannot be forged).
    public static func escaped(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars {
            if scalar == "\\" {
                shown += "\\\\"
            } else if isHidden(scalar) {
                shown += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            } else {
                shown.unicodeScalars.append(scalar)
            }
        }
        return shown
    }

    /// ``escaped(_:)`` between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE: a right-to-left
    /// name stays one unit and does not reorder the sentence it is put in.
    public static func isolated(_ text: String) -> String {
        "\u{2068}" + escaped(text) + "\u{2069}"
    }
}
