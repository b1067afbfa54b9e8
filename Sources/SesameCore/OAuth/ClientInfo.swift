import FoundationEssentials

/// Microsoft's `client_info`: base64url JSON `{"uid": …, "utid": …}`, from which MSAL builds
/// the home account id `uid.utid`.
public struct ClientInfo: Sendable, Hashable, Codable {
    /// `uid`: the user's object id in their home tenant (B2C: `{oid}-{policy}`).
    public let uid: String
    /// `utid`: the home tenant id.
    public let utid: String

    /// Decodes the base64url text; `nil` when it is not client_info.
    public init?(encoded: String) {
        guard let data = Base64URL.decode(encoded),
            let info = try? JSONDecoder().decode(ClientInfo.self, from: data),
            !info.uid.isEmpty
        else { return nil }
        self = info
    }

    /// Builds one from its parts.
    public init(uid: String, utid: String) {
        self.uid = uid
        self.utid = utid
    }

    /// The home account id, `uid.utid`.
    public var homeAccountID: String { "\(uid).\(utid)" }
}
