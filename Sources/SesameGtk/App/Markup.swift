/// Pango markup (`<b>…</b>`) around text that is not markup: a user name, a program's path.
enum Markup {
    /// `text` with `&`, `<` and `>` escaped, so Pango shows it as it is.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
