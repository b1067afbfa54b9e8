import CGtkWebKit

/// The theme's look for the whole app.
@MainActor
public enum Appearance {
    /// Uses the theme's dark variant (Adwaita's dark look), or its usual one: what
    /// `GTK_THEME=Adwaita:dark` does at start, for a running app (and the tests' screenshots).
    public static func preferDarkTheme(_ dark: Bool) {
        sesame_settings_prefer_dark_theme(dark ? 1 : 0)
    }
}
