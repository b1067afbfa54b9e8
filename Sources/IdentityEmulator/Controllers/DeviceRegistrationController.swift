import Crypto
import FoundationEssentials
import HTTPTypes
import Hummingbird
import X509
import _CryptoExtras

/// The device registration service (`enterpriseregistration.windows.net`): discovery, enrolment
/// ([MS-DVRJ]: a PKCS#10 request, a transport key, `JoinType` 0 or 4) and removal, with the
/// tenant's device settings (may users register, how many devices each). What clients send is
/// written down in docs/design/device-identity.md §2.
struct DeviceRegistrationController: EmulatorController {
    let services: EmulatorServices

    /// `JoinType`: 0 joins the device to the organization, 4 only registers it (a workplace join).
    enum JoinType: Int {
        case join = 0
        case register = 4
    }

    /// The largest enrolment body accepted (a request, a key and a few names).
    static let maximumBody = 64 * 1024

    /// `GET /{tenant}/Discover`: where to enrol, which resource to get a token for, and who signs
    /// in for it (Windows' Device Registration Client).
    func discover(_ request: Request, endpoint: IdentityEndpoint) -> Response {
        let tenant = endpoint.tenant
        return .json(
            .object([
                (
                    "DeviceRegistrationService",
                    .object([
                        ("RegistrationEndpoint", .string("\(services.deviceRegistrationRoot)/EnrollmentServer/device/")),
                        ("RegistrationResourceId", .string(ScopeRequest.deviceRegistrationResource)),
                        ("ServiceVersion", .string("1.0")),
                    ])
                ),
                (
                    "AuthenticationService",
                    .object([
                        ("OAuth2Authority", .string("\(root)/\(tenant.id)/")),
                        ("OAuth2ClientId", .string("dd762716-544d-4aeb-a526-687b73838a22")),
                        ("OAuth2RedirectUri", .string("ms-app://windows.immersivecontrolpanel/")),
                    ])
                ),
                (
                    "IdentityProviderService",
                    .object([
                        ("Federated", .bool(false)), ("PassiveAuthEndpoint", .string("\(root)/\(tenant.id)/oauth2/authorize")),
                    ])
                ),
            ]))
    }

    /// `POST /EnrollmentServer/device/`: the caller's DRS token, the tenant's device settings, the
    /// request and transport key checked; the device created and its certificate returned.
    func enroll(_ request: Request) async -> Response {
        let now = clock.now
        do {
            let user = try caller(request, now: now)
            let body = try await request.body.collect(upTo: Self.maximumBody)
            let enrolment = try Enrolment(Data(buffer: body))
            let policy = await state.policy(for: contoso.tenant)
            guard policy.usersMayRegisterDevices else {
                throw DeviceRegistrationError(
                    status: 403, code: "AuthorizationError", subcode: "error_device_registration_disabled",
                    message: "User is not authorized to register devices in Azure AD.")
            }
            guard await devices.devices(ownedBy: user.id).count < policy.maximumDevicesPerUser else {
                throw DeviceRegistrationError(
                    status: 400, code: "DirectoryError", subcode: "error_device_limit_exceeded",
                    message: "The maximum number of devices allowed for the user (\(policy.maximumDevicesPerUser)) has been reached.")
            }
            let deviceID = Identifiers.guid()
            let certificate = try services.deviceAuthority.issue(
                certificateRequest: enrolment.certificateRequest, deviceID: deviceID, now: now)
            let der = try DeviceAuthority.der(of: certificate)
            let thumbprint = try DeviceAuthority.thumbprint(of: certificate)
            let device = RegisteredDevice(
                deviceID: deviceID, objectID: Identifiers.guid(), tenantID: contoso.tenant.id, ownerID: user.id,
                displayName: enrolment.displayName, operatingSystem: enrolment.deviceType, operatingSystemVersion: enrolment.osVersion,
                trustType: enrolment.joinType == .join ? .azureAD : .workplace, registeredAt: now, accountEnabled: true,
                lastSignIn: nil, certificateThumbprint: thumbprint, transportKey: enrolment.transportKey.derRepresentation)
            try await devices.register(device)
            configuration.announce("device-registered \(deviceID) \(user.userPrincipalName)")
            return .json(
                .object([
                    ("Certificate", .object([("Thumbprint", .string(thumbprint)), ("RawBody", .string(der.base64EncodedString()))])),
                    ("User", .object([("Upn", .string(user.userPrincipalName))])),
                    ("MembershipChanges", .array([.object([("LocalSID", .string("S-1-5-32-544")), ("AddSIDs", .array([]))])])),
                ]))
        } catch let error as DeviceRegistrationError {
            return .json(error.json, status: .init(code: error.status))
        } catch {
            let failure = DeviceRegistrationError.badRequest("The request could not be read: \(error)")
            return .json(failure.json, status: .init(code: failure.status))
        }
    }

    /// `DELETE /EnrollmentServer/device/{deviceId}`: the device's owner (a DRS token) removes it,
    /// and every PRT issued to it stops working.
    func remove(_ request: Request, deviceID: String) async -> Response {
        do {
            let user = try caller(request, now: clock.now)
            guard let device = await devices.device(id: deviceID), device.ownerID == user.id else {
                throw DeviceRegistrationError(
                    status: 404, code: "DirectoryError", subcode: "error_device_not_found",
                    message: "The device object by the given id (\(deviceID)) is not found.")
            }
            try await devices.remove(deviceID: device.deviceID)
            configuration.announce("device-removed \(device.deviceID)")
            return Response(status: .ok)
        } catch let error as DeviceRegistrationError {
            return .json(error.json, status: .init(code: error.status))
        } catch {
            return .json(DeviceRegistrationError.badRequest("\(error)").json, status: .badRequest)
        }
    }

    /// The user a DRS token was issued to: signed here, for `urn:ms-drs:…`, live.
    private func caller(_ request: Request, now: Date) throws(DeviceRegistrationError) -> DirectoryUser {
        let unauthorized = DeviceRegistrationError(
            status: 401, code: "AuthenticationError", subcode: "error_missing_device_registration_token",
            message: "The access token for the device registration service is missing, expired or not for it.")
        guard let token = request.bearerToken, let claims = try? services.keys.verify(token),
            claims["aud"] as? String == ScopeRequest.deviceRegistrationResource,
            let exp = claims["exp"] as? Double, exp > now.timeIntervalSince1970,
            let oid = claims["oid"] as? String, let user = contoso.user(id: oid)
        else { throw unauthorized }
        return user
    }

    /// An enrolment request's body ([MS-DVRJ] 3.1.5.1.1.1).
    private struct Enrolment {
        let certificateRequest: Data
        let transportKey: _RSA.Encryption.PublicKey
        let deviceType: String
        let osVersion: String
        let displayName: String
        let joinType: JoinType

        init(_ data: Data) throws(DeviceRegistrationError) {
            guard let body = try? JSONDecoder().decode(Body.self, from: data) else {
                throw .badRequest(
                    "The body must be JSON with CertificateRequest, TransportKey, DeviceType, OSVersion, DeviceDisplayName and JoinType.")
            }
            guard body.certificateRequest.type.equalsIgnoringCase("pkcs10"), let request = Data(base64Encoded: body.certificateRequest.data)
            else {
                throw .badRequest("CertificateRequest must be {\"Type\":\"pkcs10\",\"Data\":<base64 DER>}.")
            }
            guard let joinType = JoinType(rawValue: body.joinType) else {
                throw .badRequest("JoinType \(body.joinType) is not served here: 0 (join) or 4 (register).")
            }
            for (name, value) in [
                ("DeviceType", body.deviceType), ("OSVersion", body.osVersion), ("DeviceDisplayName", body.deviceDisplayName),
            ]
            where value.isEmpty || value.count > 256 || value.contains(where: \.isNewline) {
                throw .badRequest("\(name) must be one line of 1 to 256 characters.")
            }
            certificateRequest = request
            transportKey = try TransportKey.parse(body.transportKey)
            deviceType = body.deviceType
            osVersion = body.osVersion
            displayName = body.deviceDisplayName
            self.joinType = joinType
        }

        /// The members as [MS-DVRJ] spells them.
        private struct Body: Decodable {
            struct Request: Decodable {
                var type: String
                var data: String
                enum CodingKeys: String, CodingKey {
                    case type = "Type"
                    case data = "Data"
                }
            }
            var certificateRequest: Request
            var transportKey: String
            var deviceType: String
            var osVersion: String
            var deviceDisplayName: String
            var joinType: Int

            enum CodingKeys: String, CodingKey {
                case certificateRequest = "CertificateRequest"
                case transportKey = "TransportKey"
                case deviceType = "DeviceType"
                case osVersion = "OSVersion"
                case deviceDisplayName = "DeviceDisplayName"
                case joinType = "JoinType"
            }
        }
    }
}
