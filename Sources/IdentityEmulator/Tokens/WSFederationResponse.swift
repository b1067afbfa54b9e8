import Crypto
import FoundationEssentials
import _CryptoExtras

/// WS-Federation's sign-in answer (`wresult`): a WS-Trust `RequestSecurityTokenResponse` carrying
/// one signed ``SAMLAssertion``, as AD FS posts it to Entra's `/login.srf`.
///
/// **The signature.** The assertion carries an enveloped XML-DSig `<ds:Signature>` (its last
/// child) with an RSA-SHA256 `SignatureValue` and the provider's certificate in
/// `<ds:KeyInfo><ds:X509Data>`. The emulator does not implement XML canonicalisation: its
/// canonical form is the exact bytes as written, which it names
/// (``exactBytesAlgorithm``) instead of claiming exclusive C14N. The `DigestValue` is the SHA-256
/// of the assertion's bytes with the `<ds:Signature>` element removed; the `SignatureValue` is
/// RSASSA-PKCS1-v1_5 with SHA-256 over the `<ds:SignedInfo>` element's bytes. Both sides read the
/// same bytes (the browser posts the form field back unchanged), so this is as strict as C14N
/// for the emulator's own answers, and any changed byte fails.
struct WSFederationResponse: Sendable {
    /// The assertion, as read.
    let assertion: SAMLAssertion
    /// The bytes the digest covers: the assertion without its signature.
    let signedBytes: [UInt8]
    /// `SignedInfo`, as written: what `SignatureValue` signs.
    let signedInfoBytes: [UInt8]
    /// `DigestValue`, decoded.
    let digestValue: Data
    /// `SignatureValue`, decoded.
    let signatureValue: Data
    /// `KeyInfo/X509Data/X509Certificate`, decoded (DER), when the answer carries one.
    let certificateDER: [UInt8]?

    /// The emulator's canonicalisation: the bytes exactly as written (see the type's comment).
    static let exactBytesAlgorithm = "urn:sesame:identity-emulator:xmldsig:exact-bytes"
    static let envelopedSignatureAlgorithm = "http://www.w3.org/2000/09/xmldsig#enveloped-signature"
    static let rsaSHA256Algorithm = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
    static let sha256Algorithm = "http://www.w3.org/2001/04/xmlenc#sha256"
    static let dsigNamespace = "http://www.w3.org/2000/09/xmldsig#"

    /// Why a `wresult` is refused.
    enum Failure: Error, Equatable {
        /// Not the expected XML, or a part missing or repeated (what is wrong, for the log).
        case malformed(String)
        /// The answer names a certificate other than the one given to check it.
        case unknownSigningKey
        /// The digest or the signature does not match.
        case badSignature
    }

    // MARK: Writing (the identity provider)

    /// The `wresult` for `assertion`, signed with `key`; the response's `t:Lifetime` is the
    /// assertion's.
    static func signed(_ assertion: SAMLAssertion, with key: SigningKey) throws -> String {
        let unsigned = assertion.xml(signature: "")
        let digest = Data(SHA256.hash(data: Data(unsigned.utf8))).base64EncodedString()
        let signedInfo =
            "<ds:SignedInfo><ds:CanonicalizationMethod Algorithm=\"\(exactBytesAlgorithm)\"/>"
            + "<ds:SignatureMethod Algorithm=\"\(rsaSHA256Algorithm)\"/>"
            + "<ds:Reference URI=\"#\(XMLText.escape(assertion.id))\"><ds:Transforms>"
            + "<ds:Transform Algorithm=\"\(envelopedSignatureAlgorithm)\"/><ds:Transform Algorithm=\"\(exactBytesAlgorithm)\"/>"
            + "</ds:Transforms><ds:DigestMethod Algorithm=\"\(sha256Algorithm)\"/><ds:DigestValue>\(digest)</ds:DigestValue>"
            + "</ds:Reference></ds:SignedInfo>"
        let signatureValue = try key.privateKey.signature(
            for: SHA256.hash(data: Data(signedInfo.utf8)), padding: .insecurePKCS1v1_5)
        let signature =
            "<ds:Signature xmlns:ds=\"\(dsigNamespace)\">\(signedInfo)"
            + "<ds:SignatureValue>\(signatureValue.rawRepresentation.base64EncodedString())</ds:SignatureValue>"
            + "<ds:KeyInfo><ds:X509Data><ds:X509Certificate>\(Data(key.certificateDER).base64EncodedString())"
            + "</ds:X509Certificate></ds:X509Data></ds:KeyInfo></ds:Signature>"
        return "<t:RequestSecurityTokenResponse xmlns:t=\"http://schemas.xmlsoap.org/ws/2005/02/trust\">"
            + "<t:Lifetime><wsu:Created xmlns:wsu=\"\(wsuNamespace)\">\(assertion.notBefore.samlTimestamp)</wsu:Created>"
            + "<wsu:Expires xmlns:wsu=\"\(wsuNamespace)\">\(assertion.notOnOrAfter.samlTimestamp)</wsu:Expires></t:Lifetime>"
            + "<wsp:AppliesTo xmlns:wsp=\"http://schemas.xmlsoap.org/ws/2004/09/policy\">"
            + "<wsa:EndpointReference xmlns:wsa=\"http://www.w3.org/2005/08/addressing\">"
            + "<wsa:Address>\(XMLText.escape(assertion.audience))</wsa:Address></wsa:EndpointReference></wsp:AppliesTo>"
            + "<t:RequestedSecurityToken>\(assertion.xml(signature: signature))</t:RequestedSecurityToken>"
            + "<t:TokenType>urn:oasis:names:tc:SAML:1.0:assertion</t:TokenType>"
            + "<t:RequestType>http://schemas.xmlsoap.org/ws/2005/02/trust/Issue</t:RequestType>"
            + "<t:KeyType>http://schemas.xmlsoap.org/ws/2005/05/identity/NoProofKey</t:KeyType>"
            + "</t:RequestSecurityTokenResponse>"
    }

    private static let wsuNamespace = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"

    // MARK: Reading (Entra)

    /// Reads a `wresult` (nothing is verified yet: see ``verify(with:)``).
    init(reading wresult: String) throws(Failure) {
        let tree: XMLTree
        do { tree = try XMLTree(parsing: wresult) } catch { throw .malformed("not well-formed XML (\(error))") }
        guard tree.root.localName == "RequestSecurityTokenResponse" else { throw .malformed("not a RequestSecurityTokenResponse") }
        let element = try Self.one(tree.descendants(of: tree.root, named: "Assertion"), "Assertion")

        func attribute(_ name: String, of element: XMLTree.Element) throws(Failure) -> String {
            guard let value = element.attribute(name), !value.isEmpty else { throw .malformed("no \(name)") }
            return value
        }
        func time(_ name: String, of element: XMLTree.Element) throws(Failure) -> Date {
            guard let date = Date(samlTimestamp: try attribute(name, of: element)) else { throw .malformed("\(name) is not a time") }
            return date
        }
        guard element.attribute("MajorVersion") == "1", element.attribute("MinorVersion") == "1" else {
            throw .malformed("not a SAML 1.1 assertion")
        }
        let conditions = try Self.one(tree.children(of: element, named: "Conditions"), "Conditions")
        let audience = try Self.one(tree.descendants(of: conditions, named: "Audience"), "Audience")
        let statement = try Self.one(tree.children(of: element, named: "AttributeStatement"), "AttributeStatement")
        func claim(_ name: String) throws(Failure) -> String {
            let attribute = try Self.one(
                tree.children(of: statement, named: "Attribute").filter { $0.attribute("AttributeName") == name }, "\(name) attribute")
            return try Self.one(tree.children(of: attribute, named: "AttributeValue"), "\(name) value").text
        }
        let authentication = try Self.one(tree.children(of: element, named: "AuthenticationStatement"), "AuthenticationStatement")
        let assertion = SAMLAssertion(
            id: try attribute("AssertionID", of: element), issuer: try attribute("Issuer", of: element),
            issueInstant: try time("IssueInstant", of: element), notBefore: try time("NotBefore", of: conditions),
            notOnOrAfter: try time("NotOnOrAfter", of: conditions), audience: audience.text,
            immutableID: try claim("ImmutableID"), userPrincipalName: try claim("UPN"),
            authenticationInstant: try time("AuthenticationInstant", of: authentication),
            authenticationMethod: try attribute("AuthenticationMethod", of: authentication))

        let signature = try Self.one(tree.children(of: element, named: "Signature"), "Signature")
        let signedInfo = try Self.one(tree.children(of: signature, named: "SignedInfo"), "SignedInfo")
        let canonicalization = try Self.one(tree.children(of: signedInfo, named: "CanonicalizationMethod"), "CanonicalizationMethod")
        let method = try Self.one(tree.children(of: signedInfo, named: "SignatureMethod"), "SignatureMethod")
        let reference = try Self.one(tree.children(of: signedInfo, named: "Reference"), "Reference")
        let digestMethod = try Self.one(tree.children(of: reference, named: "DigestMethod"), "DigestMethod")
        let transforms = tree.descendants(of: reference, named: "Transform").compactMap { $0.attribute("Algorithm") }
        guard canonicalization.attribute("Algorithm") == Self.exactBytesAlgorithm,
            method.attribute("Algorithm") == Self.rsaSHA256Algorithm, digestMethod.attribute("Algorithm") == Self.sha256Algorithm,
            transforms == [Self.envelopedSignatureAlgorithm, Self.exactBytesAlgorithm]
        else { throw .malformed("an algorithm the emulator does not use") }
        // The reference must name this very assertion (no signature wrapping).
        guard reference.attribute("URI") == "#" + assertion.id else { throw .malformed("the signature covers another element") }
        let digest = try Self.one(tree.children(of: reference, named: "DigestValue"), "DigestValue")
        let value = try Self.one(tree.children(of: signature, named: "SignatureValue"), "SignatureValue")
        let certificates = tree.descendants(of: signature, named: "X509Certificate")
        guard certificates.count <= 1 else { throw .malformed("more than one certificate") }

        guard let digestValue = Self.base64(digest.text), let signatureValue = Self.base64(value.text) else {
            throw .malformed("DigestValue or SignatureValue is not base64")
        }
        var certificateDER: [UInt8]?
        if let certificate = certificates.first {
            guard let der = Self.base64(certificate.text) else { throw .malformed("X509Certificate is not base64") }
            certificateDER = Array(der)
        }
        // The digest covers the assertion without its enveloped signature, bytes as written.
        let signedBytes =
            Array(tree.bytes(in: element.range.lowerBound..<signature.range.lowerBound))
            + Array(tree.bytes(in: signature.range.upperBound..<element.range.upperBound))
        self.init(
            assertion: assertion, signedBytes: signedBytes, signedInfoBytes: Array(tree.bytes(in: signedInfo.range)),
            digestValue: digestValue, signatureValue: signatureValue, certificateDER: certificateDER)
    }

    private init(
        assertion: SAMLAssertion, signedBytes: [UInt8], signedInfoBytes: [UInt8], digestValue: Data, signatureValue: Data,
        certificateDER: [UInt8]?
    ) {
        self.assertion = assertion
        self.signedBytes = signedBytes
        self.signedInfoBytes = signedInfoBytes
        self.digestValue = digestValue
        self.signatureValue = signatureValue
        self.certificateDER = certificateDER
    }

    /// Checks the signature against the registered key: the certificate the answer names (if
    /// any) must be that key's, the digest must match the assertion and the signature the
    /// `SignedInfo`.
    func verify(with key: SigningKey) throws(Failure) {
        if let certificateDER, certificateDER != key.certificateDER { throw .unknownSigningKey }
        guard Data(SHA256.hash(data: signedBytes)) == digestValue else { throw .badSignature }
        let signature = _RSA.Signing.RSASignature(rawRepresentation: signatureValue)
        guard
            key.privateKey.publicKey.isValidSignature(
                signature, for: SHA256.hash(data: Data(signedInfoBytes)), padding: .insecurePKCS1v1_5)
        else { throw .badSignature }
    }

    private static func one(_ elements: [XMLTree.Element], _ what: String) throws(Failure) -> XMLTree.Element {
        guard elements.count == 1, let element = elements.first else {
            throw .malformed(elements.isEmpty ? "no \(what)" : "more than one \(what)")
        }
        return element
    }

    private static func base64(_ text: String) -> Data? {
        Data(base64Encoded: text.filter { !$0.isWhitespace })
    }
}
