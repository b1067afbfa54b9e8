import FoundationEssentials
import Hummingbird

/// Microsoft Authenticator's side of a sign-in: `POST /{tenant}/SAS/EndAuth`, which the "Approve
/// sign in request" page asks until the phone answered (Entra's `ResultValue`s), and the phone's
/// own calls, which exist only here: `POST /.emulator/users/{user}/authenticator` (approve with
/// the number, deny, report) and `POST /.emulator/authenticator/activate` (the QR code scanned).
struct AuthenticatorController: EmulatorController {
    let services: EmulatorServices

    /// How long one `EndAuth` question is held while nothing changes, so that an approval reaches
    /// the page at once rather than at the next poll.
    static let holdSeconds: TimeInterval = 5

    /// `EndAuth`: `{"FlowToken": ctx, …}` → `{"Success", "ResultValue", "Retry", …}`.
    func endAuth(_ request: Request) async throws -> Response {
        let body = try await request.bodyText(limit: 8 * 1024)
        guard let fields = JSON.parseObject(Data(body.utf8)), let ctx = fields["FlowToken"] as? String,
            await state.transaction(ctx) != nil
        else {
            return answer(result: "InvalidSession", success: false, retry: false, ctx: nil)
        }
        let timeout = configuration.authenticatorTimeout
        let deadline = clock.now.addingTimeInterval(Self.holdSeconds)
        var outcome = await authenticator.pushOutcome(transactionID: ctx, now: clock.now, timeout: timeout)
        while outcome == .pending, clock.now < deadline {
            // The phone's answer ends this wait at once; the step bounds it (the clock's timeout).
            try Task.checkCancellation()
            await authenticator.answered(transactionID: ctx, within: .milliseconds(20))
            outcome = await authenticator.pushOutcome(transactionID: ctx, now: clock.now, timeout: timeout)
        }
        switch outcome {
        case .pending?: return answer(result: "AuthenticationPending", success: false, retry: true, ctx: ctx)
        case .approved?: return answer(result: "Success", success: true, retry: false, ctx: ctx)
        case .denied?: return answer(result: "PhoneAppDenied", success: false, retry: false, ctx: ctx)
        case .fraudReported?: return answer(result: "PhoneAppFraudReported", success: false, retry: false, ctx: ctx)
        case .timedOut?: return answer(result: "PhoneAppNoResponse", success: false, retry: false, ctx: ctx)
        case nil: return answer(result: "InvalidSession", success: false, retry: false, ctx: ctx)
        }
    }

    private func answer(result: String, success: Bool, retry: Bool, ctx: String?) -> Response {
        .json(
            .object([
                ("Success", .bool(success)), ("ResultValue", .string(result)),
                ("Message", success || retry ? .null : .string("Authentication method failed.")),
                ("AuthMethodId", .string("PhoneAppNotification")), ("ErrCode", .int(0)), ("Retry", .bool(retry)),
                ("FlowToken", ctx.map(JSON.string) ?? .null),
            ]))
    }

    /// The phone answers `user`'s newest waiting notification: `{"answer": "approve", "number":
    /// 42}`, `{"answer": "deny"}` or `{"answer": "report"}` ("No, it's not me").
    func phoneAnswers(user key: String, _ request: Request) async throws -> Response {
        guard let user = contoso.user(idOrPrincipalName: key) else {
            return .json(.object([("error", .string("No user '\(key)' in contoso."))]), status: .notFound)
        }
        let body = try await request.bodyText(limit: 4 * 1024)
        guard let fields = JSON.parseObject(Data(body.utf8)), let word = fields["answer"] as? String else {
            return .json(
                .object([
                    ("error", .string(#"The body is {"answer": "approve", "number": 42}, {"answer": "deny"} or {"answer": "report"}."#))
                ]),
                status: .badRequest)
        }
        let answer: AuthenticatorPushes.Answer
        switch word {
        case "approve":
            guard
                let number = (fields["number"] as? Double).flatMap({ Int(exactly: $0) })
                    ?? (fields["number"] as? String).flatMap({ Int($0) })
            else {
                return .json(
                    .object([("error", .string("Approving needs the number the sign-in page shows: \"number\": 42."))]), status: .badRequest
                )
            }
            answer = .approve(number: number)
        case "deny": answer = .deny
        case "report": answer = .report
        default:
            return .json(.object([("error", .string("'\(word)' is not approve, deny or report."))]), status: .badRequest)
        }
        guard
            let outcome = await authenticator.answerPush(
                answer, userID: user.id, now: clock.now, timeout: configuration.authenticatorTimeout)
        else {
            return .json(
                .object([("error", .string("No sign-in request is waiting on \(user.userPrincipalName)'s phone."))]), status: .notFound)
        }
        return .json(.object([("user", .string(user.userPrincipalName)), ("outcome", .string(outcome.rawValue))]))
    }

    /// The phone scanned the QR code (or typed its code): `{"code": "123456789", "device": "Pixel 9"}`.
    func activate(_ request: Request) async throws -> Response {
        let body = try await request.bodyText(limit: 4 * 1024)
        guard let fields = JSON.parseObject(Data(body.utf8)), let code = fields["code"] as? String else {
            return .json(.object([("error", .string(#"The body is {"code": "123456789", "device": "Pixel 9"}."#))]), status: .badRequest)
        }
        var device = "Phone"
        if let name = fields["device"] as? String, !name.isEmpty { device = String(name.prefix(64)) }
        guard let activation = await authenticator.activate(code: code, device: device, now: clock.now),
            let user = contoso.user(id: activation.userID)
        else {
            return .json(.object([("error", .string("No activation waits for that code: scan the QR code shown now."))]), status: .notFound)
        }
        return .json(.object([("user", .string(user.userPrincipalName)), ("device", .string(device))]))
    }
}
