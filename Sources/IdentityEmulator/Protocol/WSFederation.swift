/// WS-Federation's passive profile as Entra and AD FS speak it: the names on the wire between
/// Entra's home realm discovery, the organisation's identity provider and `/login.srf`.
enum WSFederation {
    /// `wa`: the sign-in action.
    static let signIn = "wsignin1.0"
    /// `wtrealm` and the assertions' audience: Entra's relying party name at every provider.
    static let microsoftOnlineRealm = "urn:federation:MicrosoftOnline"
    /// The most `wctx` may hold (Entra's are about a kilobyte).
    static let maximumContextLength = 4096

    /// `wctx`: Entra's context, which the provider returns unchanged. Entra writes
    /// `LoginOptions=3&estsredirect=2&estsrequest=<its request>`; here `estsrequest` is the sign-in
    /// transaction's opaque, unguessable id (the pages' `ctx`).
    static func context(transactionID: String) -> String {
        "LoginOptions=3&estsredirect=2&estsrequest=\(transactionID)"
    }

    /// The transaction id in a `wctx`, or nil when it names none.
    static func transactionID(inContext wctx: String) -> String? {
        guard wctx.utf8.count <= maximumContextLength else { return nil }
        return FormFields(encoded: wctx).nonEmpty("estsrequest")
    }
}
