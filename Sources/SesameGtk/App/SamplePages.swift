import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameWindowModel

/// The window's samples: one page per sample in a stack (the header's switcher), the first one's
/// session made before its page (``MainWindow`` starts signing in with it before anything is
/// built), the others' pages built once the window is on screen.
@MainActor
final class SamplePages {
    /// The pages' stack, which the header's switcher switches.
    let stack = Stack(crossfade: true, sizedByVisibleChild: true)
    /// Every page built so far.
    private(set) var pages: [Sample.Kind: any SamplePage] = [:]
    /// The sample shown first, and its session (made before its page, when first asked for: the
    /// window is whole by then, and its sessions report their failures to it).
    private(set) lazy var first: (sample: Sample, session: SampleSession)? = {
        (model.samples.first { $0.kind == initial } ?? model.samples.first).map { ($0, makeSession($0)) }
    }()
    private let initial: Sample.Kind?
    private let model: AppModel
    private let makeSession: @MainActor (Sample) -> SampleSession
    /// The window's hold after a redirect: while it holds, the header waits for the frame that
    /// leaves sign-in before it shows a new account.
    var holdsHeader: () -> Bool = { false }
    /// A page's account changed, or another page shows: the header shows its account.
    var onAccountShown: (() -> Void)?
    /// Another page shows.
    var onPageShown: (() -> Void)?

    /// The samples of `model`, each page's session made by `makeSession`; `initial` shows first.
    init(model: AppModel, initial: Sample.Kind?, makeSession: @escaping @MainActor (Sample) -> SampleSession) {
        self.model = model
        self.makeSession = makeSession
        self.initial = initial
    }

    /// The sample showing.
    var currentKind: Sample.Kind? { stack.visibleChildName.flatMap(Sample.Kind.init(rawValue:)) }

    /// The page showing.
    var current: (any SamplePage)? { currentKind.flatMap { pages[$0] } }

    /// The page of a sample, once built.
    subscript(kind: Sample.Kind) -> (any SamplePage)? { pages[kind] }

    /// Every page built.
    var all: [any SamplePage] { Array(pages.values) }

    /// Builds the first sample's page (once) and shows it; returns it when `joiningSignIn`, for
    /// the window to let it join the sign-in the start began.
    func buildFirstPage() -> (any SamplePage)? {
        guard let first, pages[first.sample.kind] == nil else { return nil }
        let page = buildPage(first.sample, session: first.session)
        stack.visibleChildName = first.sample.kind.rawValue
        stack.onVisibleChildChanged { [weak self] in
            self?.onAccountShown?()
            self?.onPageShown?()
        }
        onAccountShown?()
        return page
    }

    /// Builds every other sample's page (in the samples' order).
    func buildTheRest() {
        for sample in model.samples where pages[sample.kind] == nil { buildPage(sample) }
    }

    @discardableResult
    private func buildPage(_ sample: Sample, session: SampleSession? = nil) -> any SamplePage {
        let session = session ?? makeSession(sample)
        let page: any SamplePage =
            switch sample.kind {
            case .directory: DirectoryPage(session: session, trace: model.trace)
            case .tasks: TasksPage(session: session, trace: model.trace)
            case .me, .openID: MePage(session: session)
            }
        pages[sample.kind] = page
        let position = model.samples.filter { pages[$0.kind] != nil }.firstIndex { $0.kind == sample.kind }
        stack.add(page.root, name: sample.kind.rawValue, title: page.title, position: position)
        page.root.showAll()
        session.onAccountChange = { [weak self, kind = sample.kind] in
            // While the window waits for the data after a redirect, the header waits too: it
            // changes in the frame that leaves sign-in.
            if let self, self.currentKind == kind, !self.holdsHeader() { self.onAccountShown?() }
        }
        return page
    }

    /// Shows a sample's page, as clicking its tab does.
    func show(_ kind: Sample.Kind) {
        stack.visibleChildName = kind.rawValue
    }

    /// Each page hears when its data is in its widgets: `shown` is called.
    func onContentShown(_ shown: @escaping () -> Void) {
        for page in pages.values { page.onContentShown = shown }
    }

    /// `account` signed out elsewhere (the bus, another page): every page that showed it forgets it.
    func forget(_ account: Account) {
        for page in pages.values
        where page.session.account?.homeAccountID == account.homeAccountID && page.session.sample.accountType == account.accountType {
            page.session.forget()
        }
    }

    /// The network is back: each page retries what it could not read.
    func networkReturned() {
        for page in pages.values { page.networkReturned() }
    }

    /// The window closes: every page stops its requests and touches no widget again.
    func closeAll() {
        for page in pages.values { page.close() }
    }
}
