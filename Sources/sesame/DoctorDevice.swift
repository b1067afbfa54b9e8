import FoundationEssentials
import SesameCommandLine
import SesameCore
import SesameKeyring

/// `sesame doctor`'s device section: whether this computer is registered with an organization,
/// as whom, where its keys are, how old its Primary Refresh Token is and when it is renewed, and
/// what the organization's device policies will make of it. Never a key or a token.
enum DoctorDevice {
    static func lines(now: Date = Date()) async -> [DoctorBroker.Line] {
        guard let (storage, _) = try? SecretServiceTokenStorage.chosen(recording: false),
            let identity = DeviceIdentity.desktop(for: storage, transport: CommonOptions.desktopTransport())
        else {
            return [
                DoctorBroker.Line(
                    mark: "--", subject: "device",
                    text: "sign-ins are kept in files, not a keyring: this computer cannot be registered (its keys never go to a file)")
            ]
        }
        let status: DeviceIdentity.Status?
        do {
            status = try await identity.status()
        } catch {
            return [DoctorBroker.Line(mark: "--", subject: "device", text: "the registration could not be read: \(error)")]
        }
        guard let status else {
            return [
                DoctorBroker.Line(
                    mark: "--", subject: "device",
                    text: "not registered with an organization: each app signs in on its own (`sesame device register`; docs/DEVICE.md)")
            ]
        }
        let renewal = status.primaryRefreshTokenIssued.addingTimeInterval(DeviceIdentity.renewalAge)
        return [
            DoctorBroker.Line(
                mark: "OK", subject: "device",
                text: "registered with \(status.authority.host ?? "?") as \(status.deviceID) by \(status.userPrincipalName ?? "?")"),
            DoctorBroker.Line(mark: "OK", subject: "device keys", text: status.keysKept),
            DoctorBroker.Line(
                mark: status.primaryRefreshTokenExpires > now ? "OK" : "--", subject: "sign-in token",
                text: "the Primary Refresh Token is \(age(now.timeIntervalSince(status.primaryRefreshTokenIssued))) old; "
                    + (renewal > now ? "renewed at its next use after \(renewal.formatted(.iso8601))" : "renewed at its next use")
                    + "; it expires \(status.primaryRefreshTokenExpires.formatted(.iso8601)) unless used"),
            DoctorBroker.Line(
                mark: "--", subject: "device policies",
                text: "Entra registered: a policy asking for a registered device admits this computer; one asking for a compliant "
                    + "(Intune) or hybrid-joined device refuses it"),
        ]
    }

    static func age(_ seconds: TimeInterval) -> String {
        let minutes = max(0, Int(seconds / 60))
        if minutes < 60 { return "\(minutes) min" }
        if minutes < 48 * 60 { return "\(minutes / 60) h \(minutes % 60) min" }
        return "\(minutes / 1440) days"
    }
}
