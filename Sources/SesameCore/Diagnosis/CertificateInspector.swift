/// Reads the certificate a server presents, through the route its requests take: what
/// ``HealthCheck`` asks to say who issued a host's certificate (a company's TLS-inspecting proxy
/// shows up as the issuer). AsyncHTTPClient does not expose the peer's certificate, so the real
/// inspector (``TLSCertificateInspector``) makes a handshake of its own; tests pass a fake.
public protocol CertificateInspector: Sendable {
    /// The certificate `host`:`port` presents over `route`.
    func inspect(host: String, port: Int, route: ProxyRoute) async -> CertificateInspection
}

/// What a handshake with a server showed.
public enum CertificateInspection: Sendable {
    /// The chain is trusted on this computer and names the host; its issuer.
    case trusted(issuer: CertificateIssuer)
    /// The certificate is not trusted here (or is another host's); its issuer when it could be
    /// read from a second handshake that trusted nothing and sent nothing.
    case untrusted(HTTPTransportError, issuer: CertificateIssuer?)
    /// No handshake: the server or the proxy could not be reached, or TLS failed otherwise.
    case failed(HTTPTransportError)
    /// Not inspected: a SOCKS proxy is in the way (its exchanges are checked, not its certificate).
    case notInspected
}

/// Who issued a certificate: the common name and organization of its issuer, as a person
/// recognises a certificate authority ("DigiCert Global G2", "Contoso Inspection CA").
public struct CertificateIssuer: Sendable, Hashable, CustomStringConvertible {
    /// The issuer's CN, if it names one.
    public let commonName: String?
    /// The issuer's O, if it names one.
    public let organization: String?

    /// An issuer; each name is kept printable (control and format characters dropped) and at most 128
    /// characters: it comes from the server, and a terminal shows it.
    public init(commonName: String?, organization: String?) {
        func printable(_ text: String?) -> String? {
            guard let text else { return nil }
            let kept = String(
                String.UnicodeScalarView(
                    text.unicodeScalars.filter { ![.control, .format].contains($0.properties.generalCategory) }))
            return kept.isEmpty ? nil : String(kept.prefix(128))
        }
        self.commonName = printable(commonName)
        self.organization = printable(organization)
    }

    /// `CN=…, O=…`, or `(unnamed)` for an issuer with neither.
    public var description: String {
        let parts = [commonName.map { "CN=\($0)" }, organization.map { "O=\($0)" }].compactMap { $0 }
        return parts.isEmpty ? "(unnamed)" : parts.joined(separator: ", ")
    }
}
