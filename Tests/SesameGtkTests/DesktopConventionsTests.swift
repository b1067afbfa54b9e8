import Foundation
import IdentityEmulator
import SesameCore
import SesameGIO
import SesameSamples
import SesameSystem
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// The window behaves as a GNOME app: its shortcuts, pressed as keys through the display server
/// (XTest, as a keyboard does); the keyboard focus after a sign-in; its size and inspector kept
/// across restarts; and no page ever asking for more width than the window has.
final class DesktopConventionsTests: GUITestCase {
    typealias IDs = SignInPageIDs

    /// Types `text` as key presses into whatever has the focus in the window.
    @MainActor
    static func type(_ text: String, into window: Window) {
        for character in text {
            guard let press = KeyPress(character: character) else { continue }
            window.sendKey(press)
        }
    }

    /// alex signed in, the people listed.
    @MainActor
    static func signedInDirectory(screenshots: String? = "shortcuts-") throws -> GUIHarness {
        let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: screenshots)
        gui.waitForSignInPage("sign-in")
        gui.signInAsAlexUpToConsent()
        gui.clickInPage(IDs.primaryButton)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
        return gui
    }

    func testEachShortcutDoesWhatItSays() throws {
        try MainActor.assumeIsolated {
            let gui = try Self.signedInDirectory()
            defer { gui.close() }
            let window = gui.window.window
            // Without a window manager, the window has the keyboard once it asks for it.
            window.present()
            let search = try XCTUnwrap(window.find(SearchEntry.self, named: L("Search the directory")))
            let people = try XCTUnwrap(gui.people)

            // Ctrl+F: to the search field, from wherever the focus was.
            people.grabFocus()
            window.sendKey(KeyPress(character: "f", control: true)!)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { search.hasFocus }, "Ctrl+F did not go to the search field")

            // F5 and Ctrl+R: the page reads its people again.
            for press in [KeyPress(key: KeyPress.f5), KeyPress(character: "r", control: true)!] {
                let before = gui.trace.events.count
                window.sendKey(press)
                XCTAssertTrue(
                    MainLoopBridge.spin(timeout: 10) {
                        gui.trace.events.dropFirst(before).map(\.name).starts(with: ["page-refreshed"])
                            && gui.trace.events.dropFirst(before).contains { $0.name == "list-rendered" }
                    }, "\(press) did not refresh the page: \(gui.trace.events.dropFirst(before).map(\.name))")
            }

            // F9: the flow inspector (hidden at first) shows, and goes; the menu's item follows.
            let inspector = gui.window.inspectorSlot
            let inspectorItem = gui.window.primaryMenu.inspectorItem
            XCTAssertFalse(inspector.isVisible, "the inspector shows before anyone asked for it")
            window.sendKey(KeyPress(key: KeyPress.f9))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { inspector.isMapped }, "F9 did not show the inspector")
            XCTAssertTrue(inspectorItem.isChecked, "the menu does not say the inspector shows")
            window.sendKey(KeyPress(key: KeyPress.f9))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !inspector.isVisible }, "F9 did not hide the inspector")
            XCTAssertFalse(inspectorItem.isChecked)

            // F8: step-through, with the inspector (shown for it) and the menu's check mark; F8
            // again ends it, and the inspector stays until F9.
            let stepThrough = gui.window.primaryMenu.stepThroughItem
            window.sendKey(KeyPress(key: KeyPress.f8))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { inspector.isMapped }, "F8 did not show the inspector")
            XCTAssertTrue(stepThrough.isChecked && gui.trace.stepThrough.isOn, "F8 did not turn step-through on")
            window.sendKey(KeyPress(key: KeyPress.f8))
            XCTAssertFalse(stepThrough.isChecked || gui.trace.stepThrough.isOn, "F8 again did not end step-through")
            window.sendKey(KeyPress(key: KeyPress.f9))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !inspector.isVisible })

            // F10: the primary menu opens, with the app's actions, Keyboard Shortcuts and About.
            window.sendKey(KeyPress(key: KeyPress.f10))
            let menu = gui.window.primaryMenu.button
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { menu.isOpen }, "F10 did not open the primary menu")
            let items = menu.content.descendants.compactMap { $0 as? MenuItem }.map(\.title)
            XCTAssertEqual(
                items,
                [
                    L("Show Flow Inspector"), L("Step Through the Flow"), L("Programs with Access"),
                    L("Forget This Device’s Sign-in Data"), L("Keyboard Shortcuts"), L("About Sesame"),
                ])
            gui.screenshot("primary-menu")
            // Its inspector item shows the inspector, as F9 does.
            inspectorItem.click()
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) { inspector.isMapped && !menu.isOpen }, "the menu's item did not show the inspector")
            window.sendKey(KeyPress(key: KeyPress.f9))

            // Ctrl+?: the keyboard shortcuts window.
            window.sendKey(KeyPress(character: "?", control: true, shift: true)!)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) { gui.window.primaryMenu.showShortcuts()?.isMapped == true },
                "Ctrl+? did not open the shortcuts window")
            gui.window.primaryMenu.showShortcuts()?.hide()

            // About Sesame: the version, from the one place it is kept.
            menu.open()
            try XCTUnwrap(menu.content.find(MenuItem.self, named: L("About Sesame"))).click()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.window.primaryMenu.about?.isMapped == true }, "no About window")
            XCTAssertEqual(gui.window.primaryMenu.about?.version, SesameVersion.current)
            XCTAssertTrue(
                gui.window.primaryMenu.about?.license.contains("/usr/share/doc/sesame/copyright") == true,
                "the About window's licence does not say where the linked-in libraries' licences are")
            XCTAssertTrue(
                gui.window.primaryMenu.about?.license.contains("Apache License, Version 2.0") == true,
                "About does not name Sesame's licence")
            XCTAssertTrue(
                (try? String(contentsOf: Repository.root.appending(path: "LICENSE"), encoding: .utf8))?.contains("Apache License") == true,
                "no LICENSE")
            gui.window.primaryMenu.about?.destroy()

            // Ctrl+W: the window closes (as its close button does: the close request first).
            var closed = false
            window.onDestroy { closed = true }
            window.sendKey(KeyPress(character: "w", control: true)!)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { closed }, "Ctrl+W did not close the window")
        }
    }

    /// sam signs in with the keyboard alone (the view's fields take typed keys; Enter goes on),
    /// and types the next task at once: the new-task entry has the focus, no click needed.
    func testAfterAKeyboardSignInTheNextThingTypedGoesToThePage() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "tasks.plist", sample: .tasks)
            defer { gui.close() }
            let window = gui.window.window
            gui.waitForSignInPage("the B2C sign-in page")
            window.present()
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.signInPage?.hasFocus == true }, "the sign-in page has no focus")
            // The B2C page's first field has the page's focus: the e-mail, Tab, the password, Enter.
            Self.type("sam@example.com", into: window)
            window.sendKey(KeyPress(key: KeyPress.tab))
            Self.type(IDs.demoPassword, into: window)
            window.sendKey(KeyPress(key: KeyPress.enter))
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.has("token-acquired") }, "the keyboard sign-in did not end")

            let entry = try XCTUnwrap(window.find(Entry.self, named: L("New task")))
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { entry.hasFocus },
                "after the sign-in the focus is on \(window.focusedWidget.map { "\($0.accessibleName)" } ?? "nothing")")
            Self.type("Water the plants", into: window)
            window.sendKey(KeyPress(key: KeyPress.enter))
            let list = try XCTUnwrap(window.find(ListBox.self, named: L("Tasks")))
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { list.descendants.contains { ($0 as? Label)?.text == "Water the plants" } },
                "the task typed after the sign-in was not added")
        }
    }

    /// Started again with alex's account cached, the window needs no sign-in: the search field has
    /// the keyboard at once, and what is typed searches.
    func testStartedSignedInTheKeyboardIsOnTheSearchField() throws {
        try MainActor.assumeIsolated {
            let storage = Repository.temporaryDirectory("sesame-restart-focus")
            let emulator = try RunningEmulator.startBlocking(users: 50)
            defer { emulator.stop() }
            do {
                let first = try GUIHarness(
                    settingsFile: "directory.plist", sample: .directory, service: emulator.base, storageDirectory: storage)
                defer { first.close() }
                first.waitForSignInPage("sign-in")
                first.signInAsAlexUpToConsent()
                first.clickInPage(IDs.primaryButton)
                XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { first.peopleRows > 0 }, "the directory never filled")
            }
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, service: emulator.base, storageDirectory: storage)
            defer { gui.close() }
            let window = gui.window.window
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
            window.present()
            let search = try XCTUnwrap(window.find(SearchEntry.self, named: L("Search the directory")))
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { search.hasFocus },
                "after the start the focus is on \(window.focusedWidget.map { "\($0.accessibleName)" } ?? "nothing")")
            Self.type("meg", into: window)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { search.text == "meg" }, "what was typed went elsewhere: '\(search.text)'")
        }
    }

    /// The window's size, the inspector's handle and whether it shows come back at the next start.
    func testTheWindowOpensAsItWasClosed() throws {
        try MainActor.assumeIsolated {
            let folder = Repository.temporaryDirectory("sesame-window-state")
            defer { try? FileManager.default.removeItem(at: folder) }
            let stateFile = folder.appending(path: "sesame/window.json")
            do {
                let gui = try GUIHarness(settingsFile: "me.plist", sample: .me, stateFile: stateFile)
                defer { gui.close() }
                let window = gui.window.window
                XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { window.isMapped })
                window.present()
                window.resize(width: 1000, height: 650)
                gui.window.panes?.position = 480
                XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { window.size == (1000, 650) }, "\(window.size)")
                XCTAssertFalse(gui.window.inspectorSlot.isVisible, "the inspector shows at the first start")
                window.sendKey(KeyPress(key: KeyPress.f9))
                XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.window.inspectorSlot.isMapped })
                // Ctrl+Q: the window is kept, and Sesame ends (a window without its app: it closes).
                window.sendKey(KeyPress(character: "q", control: true)!)
                XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { !window.isMapped }, "Ctrl+Q did not end the window")
            }
            XCTAssertEqual(
                WindowState.load(from: stateFile),
                WindowState(width: 1000, height: 650, maximized: false, inspectorPosition: 480, inspectorShown: true))
            let again = try GUIHarness(settingsFile: "me.plist", sample: .me, stateFile: stateFile)
            defer { again.close() }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { again.window.window.isMapped })
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { again.window.window.size == (1000, 650) }, "\(again.window.window.size)")
            XCTAssertEqual(again.window.panes?.position, 480)
            XCTAssertTrue(again.window.inspectorSlot.isVisible, "the inspector the user showed did not come back")
        }
    }

    /// One look of the window: its size, its theme and its language.
    struct Look {
        var width: Int
        var height: Int
        var dark = false
        var language = "en"
        var name: String { "\(width)x\(height)" + (dark ? "-dark" : "") + (language == "en" ? "" : "-\(language)") }
    }

    /// Every look the window must fit in: three screen sizes, the dark theme, Greek and Chinese.
    /// (`GDK_SCALE=2` is a display's, set before it opens: `make test` runs this test once more
    /// with it, in a process of its own, at the size it then fits.)
    static var looks: [Look] {
        if ProcessInfo.processInfo.environment["GDK_SCALE"] == "2" { return [Look(width: 1240, height: 720)] }
        return [
            Look(width: 1280, height: 800), Look(width: 800, height: 600), Look(width: 1920, height: 1080),
            Look(width: 1280, height: 800, dark: true), Look(width: 1280, height: 800, language: "el"),
            Look(width: 1280, height: 800, language: "zh_CN"),
        ]
    }

    /// A window narrow from the start (800×600: the sign-in, then the directory in it): the list
    /// takes the height, the details under it what they need — all of them, name beside value —
    /// and the handle follows the window's height until the user drags it.
    func testANarrowWindowGivesTheListItsRowsAndTheDetailsWhatTheyNeed() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, screenshotPrefix: "narrow-")
            defer { gui.close() }
            let window = gui.window.window
            window.resize(width: 800, height: 600)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { window.size == (800, 600) }, "\(window.size)")
            gui.waitForSignInPage("sign-in")
            gui.signInAsAlexUpToConsent()
            gui.clickInPage(IDs.primaryButton)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 15) { gui.peopleRows > 0 }, "the directory never filled")
            gui.people?.selectedRow = 0
            let office = { window.find(Label.self, named: L("Office")) }
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { office()?.isMapped == true }, "the details do not show")
            gui.drainIdle()
            @MainActor func check(_ height: Int) throws {
                // The window's own frame: its content and the client-side decorations around it.
                let bottom = window.frameInWindow.map { $0.height } ?? height
                // Once GTK has laid the resized window out (the details' last field inside it).
                _ = MainLoopBridge.spin(timeout: 5) { (office()?.frameInWindow).map { $0.y + $0.height <= bottom } ?? false }
                let tableFrame = gui.people?.frameInWindow
                let lastFrame = office()?.frameInWindow
                let userFrame = window.find(Label.self, named: L("User name"))?.frameInWindow
                let table = try XCTUnwrap(tableFrame)
                let last = try XCTUnwrap(lastFrame)
                let user = try XCTUnwrap(userFrame)
                XCTAssertGreaterThanOrEqual(table.height, height * 2 / 5, "at \(height): the list got \(table.height) px")
                XCTAssertLessThanOrEqual(last.y + last.height, bottom, "at \(height): the details are cut: \(last)")
                XCTAssertGreaterThan(user.x, table.x + 20, "at \(height): name and value are not side by side")
            }
            try check(600)
            gui.screenshot("800x600")
            // Taller: the list grows; the details keep what they need.
            window.resize(width: 800, height: 900)
            XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { window.size == (800, 900) }, "\(window.size)")
            gui.drainIdle()
            let grown = MainLoopBridge.spin(timeout: 5) { (gui.people?.frameInWindow?.height ?? 0) >= 900 * 2 / 5 + 100 }
            let listHeight = gui.people?.frameInWindow?.height ?? 0
            XCTAssertTrue(grown, "the list did not grow with the window: \(listHeight) px")
            try check(900)
            gui.screenshot("800x900")
        }
    }

    /// The people with the longest names in each script — Latin, Greek, Chinese — selected one
    /// after the other, in each look: the window keeps its width, every header button and the
    /// inspector stay on screen.
    func testTheLongestNamesFitTheWindow() throws {
        try MainActor.assumeIsolated {
            setenv("LC_ALL", "C.UTF-8", 1)
            Localization.setUp(executable: URL(filePath: "/nonexistent/bin/sesame"), sourceRoot: Repository.root)
            defer {
                unsetenv("LANGUAGE")
                unsetenv("LC_ALL")
                setlocale(LC_ALL, "")
                Appearance.preferDarkTheme(false)
            }
            // One window per language (its strings are read when it is built); sizes and the
            // theme change in it, as a user resizes or switches to dark.
            var languages: [String] = []
            for look in Self.looks where !languages.contains(look.language) { languages.append(look.language) }
            for language in languages {
                setenv("LANGUAGE", language, 1)
                setlocale(LC_ALL, "")
                let gui = try Self.signedInDirectory(screenshots: "fit-")
                defer { gui.close() }
                for look in Self.looks where look.language == language {
                    Appearance.preferDarkTheme(look.dark)
                    try Self.fits(look, in: gui)
                }
            }
        }
    }

    @MainActor
    private static func fits(_ look: Look, in gui: GUIHarness) throws {
        let window = gui.window.window
        window.resize(width: look.width, height: look.height)
        XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { window.size == (look.width, look.height) }, "\(look.name): \(window.size)")
        let contoso = try XCTUnwrap(gui.emulator?.emulator.contoso)
        let scripts: [(String, (Unicode.Scalar) -> Bool)] = [
            ("latin", { $0.isASCII }), ("greek", { (0x370...0x3FF).contains($0.value) }),
            ("chinese", { (0x4E00...0x9FFF).contains($0.value) }),
        ]
        for (script, inScript) in scripts {
            let longest = try XCTUnwrap(
                contoso.users { $0.displayName.unicodeScalars.contains(where: inScript) }
                    .max { ($0.displayName.count + $0.userPrincipalName.count) < ($1.displayName.count + $1.userPrincipalName.count) },
                "no \(script) name in the directory")
            gui.search(longest.userPrincipalName)
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 10) { gui.people?.text(row: 0, column: 2) == longest.userPrincipalName },
                "\(look.name), \(script): \(longest.userPrincipalName) not found")
            gui.people?.selectedRow = 0
            XCTAssertTrue(
                MainLoopBridge.spin(timeout: 5) {
                    window.find(Label.self, named: L("User name")).map { $0.isMapped && $0.text == longest.userPrincipalName } ?? false
                }, "\(look.name), \(script): the details do not show \(longest.userPrincipalName)")
            gui.drainIdle()
            // A long user name wraps inside the word, never with a hyphen Pango would add (a
            // hyphen in an address is part of it).
            for field in [L("User name"), L("Mail")] {
                XCTAssertEqual(window.find(Label.self, named: field)?.insertsHyphens, false, "\(field) may be hyphenated")
            }
            // Tab stops on what can be copied, not on each empty field's "—".
            let empty = window.descendants.compactMap { $0 as? Label }.filter { $0.text == "—" && $0.isMapped }
            XCTAssertFalse(empty.isEmpty, "no empty field to check")
            XCTAssertTrue(empty.allSatisfy { !$0.canFocus }, "Tab stops on an empty field")
            XCTAssertEqual(window.size.width, look.width, "\(look.name), \(script): selecting \(longest.displayName) widened the window")
            for name in [L("Account"), L("Main menu")] {
                let button = try XCTUnwrap(window.find(Widget.self, named: name), name)
                let frame = try XCTUnwrap(button.frameInWindow, "\(look.name): \(name) is not on screen")
                XCTAssertLessThanOrEqual(frame.x + frame.width, look.width, "\(look.name), \(script): \(name) is pushed out of the window")
            }
            // The inspector hidden (as at first), the table's columns all fit, none cut or scrolled away.
            let table = try XCTUnwrap(gui.people)
            XCTAssertFalse(gui.window.inspectorSlot.isVisible)
            XCTAssertTrue(table.columnWidths.allSatisfy { $0 >= 100 }, "\(look.name): a column is too narrow: \(table.columnWidths)")
            XCTAssertLessThanOrEqual(
                table.columnWidths.reduce(0, +), table.visibleWidth, "\(look.name), \(script): the table's columns do not fit")
            // A cell too narrow for its text ends in "…"; the row's tooltip has them whole.
            XCTAssertTrue(
                table.text(row: 0, column: 3)?.contains(longest.userPrincipalName) == true,
                "\(look.name), \(script): the row's tooltip lacks the user name: \(table.text(row: 0, column: 3) ?? "none")")
            gui.screenshot("\(look.name)-\(script)")
        }
        // Shown (F9), the inspector stays inside the window too; F9 again hides it for the next look.
        window.sendKey(KeyPress(key: KeyPress.f9))
        XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.window.inspector?.root.isMapped == true })
        gui.drainIdle()
        let inspector = try XCTUnwrap(gui.window.inspector?.root.frameInWindow, "\(look.name): the inspector is not on screen")
        XCTAssertLessThanOrEqual(inspector.x + inspector.width, look.width, "\(look.name): the inspector is pushed out of the window")
        gui.screenshot("\(look.name)-inspector")
        window.sendKey(KeyPress(key: KeyPress.f9))
        XCTAssertTrue(MainLoopBridge.spin(timeout: 5) { gui.window.inspector?.root.isMapped == false }, "F9 did not hide the inspector")
    }

    /// Alt+1, Alt+2, Alt+3: the samples in the switcher's order, as GNOME apps switch tabs.
    func testAltAndANumberSwitchesSamples() throws {
        try MainActor.assumeIsolated {
            let gui = try GUIHarness(settingsFile: "directory.plist", sample: .directory, moreSettingsFiles: ["tasks.plist", "me.plist"])
            defer { gui.close() }
            let window = gui.window.window
            XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { gui.window.window.isVisible })
            for (number, kind) in [(3, Sample.Kind.me), (1, .directory), (2, .tasks)] {
                // A page that opened its sign-in by itself: the user reads it, then presses Cancel.
                if gui.window.signIn.isSigningIn {
                    gui.waitForSignInPage("the sign-in page before Alt+\(number)")
                    gui.click(button: L("Cancel sign-in"))
                }
                XCTAssertTrue(MainLoopBridge.spin(timeout: 10) { !gui.window.signIn.isSigningIn }, "a sign-in stayed open")
                window.sendKey(try XCTUnwrap(KeyPress(character: Character(String(number)), alt: true)))
                XCTAssertTrue(
                    MainLoopBridge.spin(timeout: 5) { gui.window.samples.currentKind == kind },
                    "Alt+\(number) did not show \(kind): \(String(describing: gui.window.samples.currentKind))")
            }
            XCTAssertNil(WindowShortcut(try XCTUnwrap(KeyPress(character: "1", control: true))), "Ctrl+1 is not Alt+1")
        }
    }
}
