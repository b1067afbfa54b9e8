import FoundationEssentials

/// Microsoft Authenticator's notifications waiting on users' phones, by sign-in transaction (in
/// memory, as the phones' side of the service):
/// the number the sign-in page shows (number matching), and what the phone answered. The phone
/// is the test's or the presenter's: it answers through `POST /.emulator/users/{user}/authenticator`
/// or `identity-emulator authenticator`.
actor AuthenticatorPushes {
    /// One notification.
    struct Push: Sendable, Equatable {
        let userID: String
        /// The two-digit number shown on the sign-in page, which the user types on the phone.
        let number: Int
        let sentAt: Date
        /// The app being signed in to, as the phone shows it.
        let appName: String
        var outcome: Outcome = .pending
    }

    /// Where a notification stands.
    enum Outcome: String, Sendable, Equatable {
        /// Sent; the phone has not answered (`AuthenticationPending`).
        case pending
        /// Approved with the number the page shows (`Success`).
        case approved
        /// Denied on the phone, or approved with another number (`PhoneAppDenied`).
        case denied
        /// "No, it's not me" / "I didn't try to sign in" (`PhoneAppFraudReported`): the sign-in
        /// is blocked.
        case fraudReported
        /// No answer within the notification's lifetime (`PhoneAppNoResponse`).
        case timedOut
    }

    /// What the phone answers.
    enum Answer: Sendable, Equatable {
        case approve(number: Int)
        case deny
        case report
    }

    private var pushes: [String: Push] = [:]
    /// Activations shown as QR codes and not yet used up, by code.
    private var activations: [String: AuthenticatorActivation] = [:]

    /// A new activation for `userID`, to show as a QR code (replacing the user's earlier ones).
    func beginActivation(userID: String, base: String, now: Date) -> AuthenticatorActivation {
        activations = activations.filter { $0.value.userID != userID && now.timeIntervalSince($0.value.createdAt) < 900 }
        let code = String(Int.random(in: 100_000_000...999_999_999))
        let activation = AuthenticatorActivation(
            userID: userID, code: code, url: "\(base)/.emulator/authenticator/activate", createdAt: now)
        activations[code] = activation
        return activation
    }

    /// The phone scanned (or typed) `code`: its device name is kept; nil for an unknown or old code.
    func activate(code: String, device: String, now: Date) -> AuthenticatorActivation? {
        guard var activation = activations[code], now.timeIntervalSince(activation.createdAt) < 900 else { return nil }
        activation.device = device
        activations[code] = activation
        return activation
    }

    /// The activation of `userID` a phone completed, if any.
    func activatedAuthenticator(userID: String) -> AuthenticatorActivation? {
        activations.values.first { $0.userID == userID && $0.device != nil }
    }

    func endActivation(userID: String) { activations = activations.filter { $0.value.userID != userID } }

    /// A new notification for transaction `id` (replacing one still waiting); its number.
    func sendPush(transactionID id: String, userID: String, appName: String, now: Date) -> Int {
        pushes = pushes.filter { now.timeIntervalSince($0.value.sentAt) < 3600 }
        let number = Int.random(in: 10...99)
        pushes[id] = Push(userID: userID, number: number, sentAt: now, appName: appName)
        return number
    }

    /// Where transaction `id`'s notification stands; pending ones older than `timeout` time out.
    func pushOutcome(transactionID id: String, now: Date, timeout: TimeInterval) -> Outcome? {
        guard var push = pushes[id] else { return nil }
        if push.outcome == .pending, now.timeIntervalSince(push.sentAt) >= timeout {
            push.outcome = .timedOut
            pushes[id] = push
        }
        return push.outcome
    }

    func push(transactionID id: String) -> Push? { pushes[id] }

    /// The user's newest notification still waiting, as the phone shows it.
    func waitingPush(userID: String, now: Date, timeout: TimeInterval) -> Push? {
        pushes.values.filter { $0.userID == userID && $0.outcome == .pending && now.timeIntervalSince($0.sentAt) < timeout }
            .max { $0.sentAt < $1.sentAt }
    }

    /// The phone answers the user's newest waiting notification; nil when none waits.
    func answerPush(_ answer: Answer, userID: String, now: Date, timeout: TimeInterval) -> Outcome? {
        guard
            let (id, push) = pushes.filter({
                $0.value.userID == userID && $0.value.outcome == .pending && now.timeIntervalSince($0.value.sentAt) < timeout
            }).max(by: { $0.value.sentAt < $1.value.sentAt })
        else { return nil }
        var answered = push
        switch answer {
        case .approve(let number): answered.outcome = number == push.number ? .approved : .denied
        case .deny: answered.outcome = .denied
        case .report: answered.outcome = .fraudReported
        }
        pushes[id] = answered
        // The `EndAuth` question held for this notification answers at once.
        for waiter in waiters.removeValue(forKey: id)?.values ?? [:].values { waiter.resume() }
        return answered.outcome
    }

    /// The `EndAuth` questions held, by transaction: each resumed when its notification is answered
    /// or its wait's step ends.
    private var waiters: [String: [UUID: CheckedContinuation<Void, Never>]] = [:]

    /// Returns when the phone answers `id`'s notification (at once if it has, or if there is
    /// none), or after `limit`: the hold of `EndAuth`, which an answer ends at once rather than at
    /// its next look. Checked and waited for in one step of the actor: no answer comes between.
    func answered(transactionID id: String, within limit: Duration) async {
        guard pushes[id]?.outcome == .pending else { return }
        let waiter = UUID()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            waiters[id, default: [:]][waiter] = continuation
            Task { [weak self] in
                try? await Task.sleep(for: limit)
                await self?.stopWaiting(transactionID: id, waiter: waiter)
            }
        }
    }

    private func stopWaiting(transactionID id: String, waiter: UUID) {
        waiters[id]?.removeValue(forKey: waiter)?.resume()
        if waiters[id]?.isEmpty == true { waiters[id] = nil }
    }

    func endPush(transactionID id: String) { pushes[id] = nil }
}

/// What the QR code of "Scan the QR code" carries: Microsoft Authenticator's activation,
/// `phonefactor://activate_account?code=…&url=…` (the code and URL also shown in words).
struct AuthenticatorActivation: Sendable, Equatable {
    let userID: String
    /// The activation code (nine digits).
    let code: String
    /// Where the phone activates.
    let url: String
    let createdAt: Date
    /// The phone's name, once it activated.
    var device: String?

    /// The URI the QR code encodes.
    var uri: String { "phonefactor://activate_account?code=\(code)&url=\(url)" }
}
