import Foundation
import IdentityEmulator
import SesameGIO
import SesameSamples
import SesameTestSupport
import SesameWindowModel
import XCTest

@testable import SesameGtk

/// The window speaks the seeds' languages, chosen by the usual locale variables.
final class TranslationTests: GUITestCase {
    func testTheWindowFollowsLANGUAGE() throws {
        try MainActor.assumeIsolated {
            let root = Repository.root
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: root.appending(path: ".build/locale/es/LC_MESSAGES/sesame.mo").path),
                "translations are not compiled: run `make translations` (make test does)")
            setenv("LC_ALL", "C.UTF-8", 1)
            defer {
                unsetenv("LANGUAGE")
                unsetenv("LC_ALL")
            }
            Localization.setUp(executable: URL(filePath: "/nonexistent/bin/sesame"), sourceRoot: root)

            let expected = [
                ("es", "Cerrar sesión", "Busca personas por nombre, correo o nombre de usuario"),
                ("el", "Αποσύνδεση", "Αναζήτηση ατόμων με όνομα, email ή όνομα χρήστη"),
                ("zh_CN", "注销", "按姓名、电子邮件或用户名搜索人员"),
                ("zh_TW", "登出", "依姓名、電子郵件或使用者名稱搜尋人員"),
            ]
            for (language, signOut, placeholder) in expected {
                setenv("LANGUAGE", language, 1)
                // A running program does not usually change language; setlocale drops gettext's cache.
                setlocale(LC_ALL, "")
                XCTAssertEqual(L("Sign Out"), signOut, language)
                let gui = try GUIHarness(
                    settingsFile: "directory.plist", sample: .directory,
                    screenshotPrefix: language == "es" ? "translated-es-" : nil)
                // The sample's page is built once the first sign-in page has loaded.
                gui.waitForSignInPage("\(language) window")
                XCTAssertEqual(
                    gui.window.window.find(SearchEntry.self, named: L("Search the directory"))?.placeholder, placeholder, language)
                if language == "es" {
                    gui.screenshot("sign-in")
                    // The flow inspector explains each step in the user's language: the authorization request's.
                    gui.window.inspectorPane.toggle()
                    let view = try XCTUnwrap(gui.window.inspector?.diagram)
                    XCTAssertTrue(
                        MainLoopBridge.spin(timeout: 10) { view.model.steps.contains { $0.label.hasPrefix("GET …/authorize") } },
                        "\(view.model.steps.map(\.label))")
                    view.select(view.model.steps.firstIndex { $0.label.hasPrefix("GET …/authorize") })
                    XCTAssertTrue(view.details.text.contains("La solicitud de autorización (el authURL del tutorial"), view.details.text)
                    XCTAssertTrue(view.details.text.contains("Fuente: RFC 6749 §4.1.1"), view.details.text)
                    gui.screenshot("inspector-explained")
                    // Step-through in Spanish: the bar, and the waiting step's row and explanation.
                    gui.window.window.sendKey(KeyPress(key: KeyPress.f8))
                    let bar = try XCTUnwrap(gui.window.inspector?.stepBar)
                    XCTAssertEqual(bar.status.text, "Paso a paso: el siguiente paso te esperará.")
                    gui.signInPage?.evaluateJavaScript(GUIHarness.fill(SignInPageIDs.userName, "alex@contoso.onmicrosoft.com"))
                    XCTAssertTrue(
                        MainLoopBridge.spin(timeout: 10) { view.details.text.contains("Paso a paso: este paso te espera.") },
                        view.details.text)
                    XCTAssertTrue(view.model.steps.contains { $0.label.hasPrefix("espera a Siguiente: POST") })
                    XCTAssertEqual(bar.status.text, "El siguiente paso te espera: Siguiente deja que ocurra.")
                    gui.click(button: "Continue")
                }
                gui.click(button: "Cancel sign-in")
                gui.close()
            }
            unsetenv("LANGUAGE")
            setlocale(LC_ALL, "")
            XCTAssertEqual(L("Sign Out"), "Sign Out")
        }
    }
}
