/// Unguessable values for `state`, `nonce` and PKCE verifiers.
///
/// `SystemRandomNumberGenerator` is the platform CSPRNG (`getrandom(2)` on Linux), which is
/// what RFC 7636 §7.1 and the OIDC core spec ask for.
enum RandomString {
    /// `byteCount` random bytes from the CSPRNG, base64url-encoded.
    static func base64URL(byteCount: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<byteCount).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return Base64URL.encode(bytes)
    }
}
