import FoundationEssentials

/// A device object in the directory, as device registration creates it and Graph's `device`
/// resource shows it ([MS-DVRJ] 3.1.5.1.1; Graph `microsoft.graph.device`).
struct RegisteredDevice: Codable, Sendable, Equatable {
    /// How the device belongs to the organization: Graph's `trustType`.
    enum TrustType: String, Codable, Sendable {
        /// "Microsoft Entra registered" (a workplace join, `JoinType` 4): the user's own device.
        case workplace = "Workplace"
        /// "Microsoft Entra joined" (`JoinType` 0): the organization's device.
        case azureAD = "AzureAd"
    }

    /// `deviceId`: the id the device's certificate names as its subject (`CN=`).
    var deviceID: String
    /// `id`: the directory object's id (Graph's, distinct from `deviceId` as in Entra).
    var objectID: String
    /// The tenant it is registered in.
    var tenantID: String
    /// The user who registered it (`registeredOwners`).
    var ownerID: String
    /// `displayName`: `DeviceDisplayName` as sent.
    var displayName: String
    /// `operatingSystem`: `DeviceType` as sent (`Windows`, `Linux`, …).
    var operatingSystem: String
    /// `operatingSystemVersion`: `OSVersion` as sent.
    var operatingSystemVersion: String
    /// `trustType`.
    var trustType: TrustType
    /// `registrationDateTime`.
    var registeredAt: Date
    /// `accountEnabled`: an administrator may disable it (its PRTs stop working).
    var accountEnabled: Bool
    /// `approximateLastSignInDateTime`: the last PRT issued or used.
    var lastSignIn: Date?
    /// SHA-1 of the issued certificate (`Certificate.Thumbprint`, upper-case hex).
    var certificateThumbprint: String
    /// `TransportKey`'s public key (SubjectPublicKeyInfo DER): session keys are encrypted to it.
    var transportKey: Data

    /// `isCompliant` and `isManaged`: nothing here enrols in a device management service, so
    /// registered devices are neither (a policy asking for either still refuses them).
    var isCompliant: Bool { false }
    var isManaged: Bool { false }

    /// The device as Graph's `device` resource.
    var graphJSON: JSON {
        .members([
            ("@odata.type", .string("#microsoft.graph.device")),
            ("id", .string(objectID)),
            ("deviceId", .string(deviceID)),
            ("displayName", .string(displayName)),
            ("operatingSystem", .string(operatingSystem)),
            ("operatingSystemVersion", .string(operatingSystemVersion)),
            ("trustType", .string(trustType.rawValue)),
            ("accountEnabled", .bool(accountEnabled)),
            ("isCompliant", .bool(isCompliant)),
            ("isManaged", .bool(isManaged)),
            ("registrationDateTime", .string(registeredAt.iso8601Seconds)),
            ("approximateLastSignInDateTime", lastSignIn.map { .string($0.iso8601Seconds) } ?? .null),
        ])
    }
}
