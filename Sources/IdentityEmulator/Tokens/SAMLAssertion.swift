import FoundationEssentials

/// A SAML 1.1 assertion as AD FS issues it to Microsoft Entra ID over WS-Federation: who signed
/// in (the `UPN` claim and the `ImmutableID` source anchor), for whom (the audience
/// `urn:federation:MicrosoftOnline`), by whom (the issuer URI) and for how long. It travels signed
/// inside a ``WSFederationResponse``.
struct SAMLAssertion: Sendable, Equatable {
    /// `AssertionID`: `_` and a GUID; Entra accepts each once.
    var id: String
    /// `Issuer`: the identity provider's issuer URI (``FederatedDomain/issuerURI``).
    var issuer: String
    /// `IssueInstant`.
    var issueInstant: Date
    /// `Conditions/@NotBefore`.
    var notBefore: Date
    /// `Conditions/@NotOnOrAfter`.
    var notOnOrAfter: Date
    /// `AudienceRestrictionCondition/Audience`: the relying party, ``WSFederation/microsoftOnlineRealm``.
    var audience: String
    /// `NameIdentifier` and the `ImmutableID` attribute: the user's source anchor, which Entra
    /// holds as `onPremisesImmutableId` (base64 of the on-premises object GUID).
    var immutableID: String
    /// The `UPN` attribute (`http://schemas.xmlsoap.org/claims/UPN`).
    var userPrincipalName: String
    /// `AuthenticationStatement/@AuthenticationInstant`.
    var authenticationInstant: Date
    /// `AuthenticationStatement/@AuthenticationMethod`: how the provider checked the user.
    var authenticationMethod: String = Self.passwordMethod

    /// SAML's "the user typed a password".
    static let passwordMethod = "urn:oasis:names:tc:SAML:1.0:am:password"

    /// The namespace of the `saml:` prefix.
    static let namespace = "urn:oasis:names:tc:SAML:1.0:assertion"

    /// The assertion as AD FS writes it, with `signature` (a `<ds:Signature>` element, or nothing)
    /// as its last child: the enveloped signature's place. The text without a signature is what
    /// the signature's digest covers.
    func xml(signature: String) -> String {
        let subject =
            "<saml:Subject><saml:NameIdentifier Format=\"urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified\">"
            + XMLText.escape(immutableID)
            + "</saml:NameIdentifier><saml:SubjectConfirmation><saml:ConfirmationMethod>urn:oasis:names:tc:SAML:1.0:cm:bearer"
            + "</saml:ConfirmationMethod></saml:SubjectConfirmation></saml:Subject>"
        return "<saml:Assertion MajorVersion=\"1\" MinorVersion=\"1\" AssertionID=\"\(XMLText.escape(id))\" "
            + "Issuer=\"\(XMLText.escape(issuer))\" IssueInstant=\"\(issueInstant.samlTimestamp)\" xmlns:saml=\"\(Self.namespace)\">"
            + "<saml:Conditions NotBefore=\"\(notBefore.samlTimestamp)\" NotOnOrAfter=\"\(notOnOrAfter.samlTimestamp)\">"
            + "<saml:AudienceRestrictionCondition><saml:Audience>\(XMLText.escape(audience))</saml:Audience>"
            + "</saml:AudienceRestrictionCondition></saml:Conditions>"
            + "<saml:AttributeStatement>\(subject)"
            + "<saml:Attribute AttributeName=\"UPN\" AttributeNamespace=\"http://schemas.xmlsoap.org/claims\">"
            + "<saml:AttributeValue>\(XMLText.escape(userPrincipalName))</saml:AttributeValue></saml:Attribute>"
            + "<saml:Attribute AttributeName=\"ImmutableID\" AttributeNamespace=\"http://schemas.microsoft.com/LiveID/Federation/2008/05\">"
            + "<saml:AttributeValue>\(XMLText.escape(immutableID))</saml:AttributeValue></saml:Attribute>"
            + "</saml:AttributeStatement>"
            + "<saml:AuthenticationStatement AuthenticationMethod=\"\(XMLText.escape(authenticationMethod))\" "
            + "AuthenticationInstant=\"\(authenticationInstant.samlTimestamp)\">\(subject)</saml:AuthenticationStatement>"
            + signature
            + "</saml:Assertion>"
    }

    /// The `ImmutableID` of a directory user: base64 of the 16 bytes of its object id, in the
    /// byte order of a .NET `Guid` (as Entra Connect derives it from an AD `objectGUID`).
    static func immutableID(forUserID id: String) -> String? {
        let hex = Array(id.filter { $0 != "-" }.utf8)
        guard hex.count == 32 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: 32, by: 2) {
            guard let byte = UInt8(String(decoding: hex[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        // .NET writes the first three fields little-endian.
        let reordered = [bytes[3], bytes[2], bytes[1], bytes[0], bytes[5], bytes[4], bytes[7], bytes[6]] + bytes[8...]
        return Data(reordered).base64EncodedString()
    }
}

extension Date {
    /// SAML's `xs:dateTime` in UTC with milliseconds, as AD FS writes it: `2026-11-22T10:00:48.123Z`.
    var samlTimestamp: String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond], from: self)
        func two(_ value: Int?) -> String { String(value ?? 0).leftPadded(to: 2) }
        let milliseconds = String(min(999, (c.nanosecond ?? 0) / 1_000_000)).leftPadded(to: 3)
        return "\(String(c.year ?? 1970).leftPadded(to: 4))-\(two(c.month))-\(two(c.day))T\(two(c.hour)):\(two(c.minute)):"
            + "\(two(c.second)).\(milliseconds)Z"
    }

    /// Reads `YYYY-MM-DDThh:mm:ss[.fraction]Z` (UTC only, as AD FS and Entra write SAML times);
    /// nil for anything else.
    init?(samlTimestamp text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count >= 20, bytes.count <= 40, bytes.last == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            guard bytes[range].allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
            return Int(String(decoding: bytes[range], as: UTF8.self))
        }
        guard bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
            bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
            let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
            let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
            (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var fraction = 0.0
        if bytes.count > 20 {
            guard bytes[19] == UInt8(ascii: "."), bytes.count > 21, let digits = number(20..<(bytes.count - 1)) else { return nil }
            fraction = Double(digits) / (0..<(bytes.count - 21)).reduce(1.0) { power, _ in power * 10 }
        } else {
            guard bytes[19] == UInt8(ascii: "Z") else { return nil }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard calendar.date(from: components).map({ calendar.component(.day, from: $0) == day }) == true,
            let date = calendar.date(from: components)
        else { return nil }
        self = date.addingTimeInterval(fraction)
    }
}
