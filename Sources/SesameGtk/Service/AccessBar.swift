import Foundation
import SesameCore
import SesameSamples

/// The window's question for a program that asks for a token the first time: "Allow <program>
/// to use <account> (<scopes>)?" with Allow once, Always and Deny, as a bar above the content
/// (over the samples and the sign-in page alike). Questions come one at a time, in order; each
/// button has an accessible name, so a screen reader — and the tests, through AT-SPI — find it.
@MainActor
final class AccessBar: AccessQuestioner {
    /// The bar.
    let root = Box(vertical: false, spacing: 8)
    private let question = Label("", wrap: true, xalign: 0)
    private let origin = Label("", wrap: true, xalign: 0)
    private var current: CheckedContinuation<AccessAnswer?, Never>?
    private var waiting: [(AccessRequest, CheckedContinuation<AccessAnswer?, Never>)] = []
    /// Shows the window (the service may run without one on screen).
    var onAsk: (() -> Void)?

    init() {
        root.setMargin(8)
        root.setName("access-question")
        question.accessibleName = L("Program asking for access")
        origin.accessibleName = L("Where the program is")
        origin.addStyleClass("dim-label")
        let texts = Box(vertical: true, spacing: 2)
        texts.pack(question)
        texts.pack(origin)
        root.pack(texts, expand: true)
        root.pack(Button(L("Allow once"), accessibleName: L("Allow this program once")) { [weak self] in self?.answer(.allowOnce) })
        root.pack(Button(L("Always"), accessibleName: L("Always allow this program")) { [weak self] in self?.answer(.always) })
        root.pack(Button(L("Deny"), accessibleName: L("Deny this program")) { [weak self] in self?.answer(.deny) })
    }

    func ask(_ request: AccessRequest) async -> AccessAnswer? {
        await withCheckedContinuation { continuation in
            waiting.append((request, continuation))
            showNext()
        }
    }

    /// Answers the question showing (the buttons; tests).
    func answer(_ answer: AccessAnswer?) {
        let asked = current
        current = nil
        root.hide()
        asked?.resume(returning: answer)
        showNext()
    }

    /// Dismisses every question (the window closes): no program gets a token.
    func dismissAll() {
        let all = waiting.map(\.1) + (current.map { [$0] } ?? [])
        waiting = []
        current = nil
        root.hide()
        for continuation in all { continuation.resume(returning: nil) }
    }

    private func showNext() {
        guard current == nil, !waiting.isEmpty else { return }
        let (request, continuation) = waiting.removeFirst()
        current = continuation
        let scopes = request.scopes.isEmpty ? L("its usual permissions") : request.scopes.joined(separator: ", ")
        question.text = String(format: L("Allow %@ to use %@ (%@)?"), request.program.name, request.username, scopes)
        origin.text =
            switch request.program.kind {
            case .executable: String(format: L("The program %@"), request.program.id)
            case .flatpak: String(format: L("The Flatpak app %@"), request.program.id)
            }
        root.showAll()
        onAsk?()
    }
}
