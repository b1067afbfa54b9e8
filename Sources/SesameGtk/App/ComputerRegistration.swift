import FoundationEssentials
import SesameCore
import SesameSamples
import SesameService
import SesameSystem
import SesameWindowModel

/// The window's side of this computer's registration with the organization (docs/DEVICE.md): the
/// account menu's "Register This Computer…" and "Remove This Computer’s Registration…" (and a
/// refusal's, when a policy asks for a registered device), the question before each, the
/// registration's sign-in on the window's own sign-in page, what came of it, and the device's
/// single sign-on credential for the sign-in pages that still show. The
/// registration itself is the store's ``DeviceIdentity``'s; this only asks and tells.
@MainActor
final class ComputerRegistration {
    private let device: DeviceIdentity
    private let store: AccountStore
    private let target: RegistrationTarget
    private let signIn: SignInPane
    private let trace: FlowTrace
    /// Follows the store: a sign-in that found the registration gone.
    private var storeEvents: Task<Void, Never>?
    let dialog = DeviceDialog()
    /// The registration as last read (nil: not registered).
    private(set) var status: DeviceIdentity.Status?
    /// Each reading of ``status`` (the account menu shows it).
    var onChange: ((DeviceIdentity.Status?) -> Void)?
    /// Runs once a registration is done and said (the sample showing signs in, if nobody is).
    var afterRegistering: (() -> Void)?
    /// A registration or removal is under way: a second choice waits for nothing and does nothing.
    private(set) var isBusy = false

    /// Nil when the window cannot register: its sign-ins are in files (no device identity), or
    /// no sample signs in to a Microsoft work or school organization.
    init?(model: AppModel, signIn: SignInPane, window: Window) {
        guard let device = model.store.device, let target = try? RegistrationTarget(settings: model.samples.map(\.settings)) else {
            return nil
        }
        self.device = device
        store = model.store
        self.target = target
        self.signIn = signIn
        trace = model.trace
        dialog.parent = { [weak window] in window }
    }

    isolated deinit { storeEvents?.cancel() }

    /// Offers registering in `menu` (and in the refusals of `errorBar` and the sign-in page that
    /// ask for a registered device), shows the registration there, and says once when a sign-in
    /// finds it gone.
    func connect(menu: AccountMenu, errorBar: ErrorBar) {
        let register: () -> Void = { [weak self] in Task { await self?.register() } }
        menu.onRegisterComputer = register
        errorBar.onRegisterDevice = register
        signIn.onRegisterDevice = register
        menu.onRemoveRegistration = { [weak self] in Task { await self?.remove() } }
        // A page the PRT could not spare (an app to consent to) knows the device and its user.
        signIn.deviceCredentials = { [device] url in try? await device.ssoCookie(for: url) }
        onChange = { [weak menu] status in menu?.showDevice(status) }
        // Another program may have registered or removed the computer meanwhile: the menu reads
        // it again as it opens (the device identity reads the keyring only when that changed).
        menu.onToggle = { [weak self] in Task { await self?.refresh() } }
        afterRegistering = { [weak menu] in if menu?.offersSignIn == true { menu?.onSignIn?() } }
        storeEvents = Task { [weak self, store] in
            await self?.refresh()
            for await event in await store.events() {
                guard case .deviceLost = event else { continue }
                await self?.lost()
            }
        }
    }

    /// Reads the registration again.
    func refresh() async {
        status = try? await device.status()
        onChange?(status)
    }

    /// Asks, then registers this computer: the user signs in on the window's sign-in page (a
    /// sign-in under way there is cancelled first), and the dialog says what came of it.
    func register() async {
        guard !isBusy else { return }
        isBusy = true
        defer { isBusy = false }
        await refresh()
        guard status == nil else { return }
        let question = DeviceDialog.Content(
            heading: L("Register this computer with your organization?"),
            text: L(
                "Your organization will know this computer by the name below: it appears among your devices, and sign-ins from it name it. One sign-in then serves every app of the organization. You can remove it any time from the account menu."
            ),
            name: ThisComputer.hostName(), action: (L("Register"), L("Register this computer")))
        guard let typed = await dialog.show(question) else { return }
        let trimmed = typed.trimmingWhitespace()
        let name = trimmed.isEmpty || trimmed.count > 64 ? ThisComputer.hostName() : trimmed
        if signIn.isSigningIn { signIn.cancel() }
        trace.record("device-registration-started", [("tenant", target.tenant)])
        do throws(DeviceIdentityError) {
            let registration = try await signIn.signingIn(for: .registration) { () async throws(DeviceIdentityError) in
                try await device.register(
                    authority: target.authority, tenant: target.tenant, displayName: name, osVersion: ThisComputer.operatingSystem(),
                    using: signIn)
            }
            trace.record("device-registered", [("deviceId", registration.deviceID)])
            await refresh()
            _ = await dialog.show(
                .init(
                    heading: L("This computer is registered"),
                    text: String(formatting: L("Your organization knows it as “%@”. Its apps now sign you in without a page."), name)))
            // What the user was doing goes on: a sample nobody is signed in to signs in, now with no page.
            afterRegistering?()
        } catch {
            trace.record("device-registration-failed", [("error", error.serviceCode ?? error.code.rawValue)])
            await refresh()
            guard error.code != .cancelled else { return }
            _ = await dialog.show(.init(heading: L("This computer was not registered"), text: error.description))
        }
    }

    /// Asks, then removes this computer from the organization and its keys and token from here.
    func remove() async {
        guard !isBusy else { return }
        isBusy = true
        defer { isBusy = false }
        await refresh()
        guard status != nil else { return }
        let question = DeviceDialog.Content(
            heading: L("Remove this computer from your organization?"),
            text: L(
                "Your organization will no longer know it, and its keys and sign-in token are deleted from this computer. Apps sign in with their pages again."
            ),
            action: (L("Remove"), L("Remove this computer’s registration")), destructive: true)
        guard await dialog.show(question) != nil else { return }
        do throws(DeviceIdentityError) {
            try await device.remove()
            trace.record("device-removed")
            await refresh()
        } catch {
            await refresh()
            _ = await dialog.show(.init(heading: L("The registration was not removed"), text: error.description))
        }
    }

    /// The organization removed or disabled this computer (found at a sign-in): said once.
    func lost() async {
        guard let loss = await device.takeLoss() else { return }
        await refresh()
        guard loss.code != .keysUnreadable else {
            let text = L(
                "Its keys are in its TPM, which could not be used. Sign-ins show their pages until it can; removing the registration from the account menu forgets it."
            )
            _ = await dialog.show(.init(heading: L("This computer’s sign-in cannot be used"), text: text))
            return
        }
        let text =
            loss.code == .deviceRemoved
            ? L(
                "Your organization removed this computer, so Sesame has forgotten its registration. Sign-ins show their pages again; you can register it anew from the account menu."
            )
            : L("An administrator disabled this computer in your organization. Sign-ins show their pages until it is enabled again.")
        _ = await dialog.show(.init(heading: L("This computer is no longer registered"), text: text))
    }
}
