import CGio

/// A GLib `GError`, converted once at the boundary.
public struct GLibError: Error, CustomStringConvertible, Sendable {
    /// The error domain (`WebKitNetworkError`, …).
    public let domain: String
    /// The code within the domain.
    public let code: Int
    /// GLib's message.
    public let message: String

    package init(_ error: UnsafeMutablePointer<GError>?) {
        guard let error else {
            domain = ""
            code = 0
            message = "unknown error"
            return
        }
        domain = String(cString: g_quark_to_string(error.pointee.domain))
        code = Int(error.pointee.code)
        message = error.pointee.message.map { String(cString: $0) } ?? ""
    }

    public var description: String { message }

    /// `G_IO_ERROR_CANCELLED`, in the `g-io-error-quark` domain.
    public static let ioCancelled = Int(G_IO_ERROR_CANCELLED.rawValue)

    /// An error as GLib would report it (for deciding what to do with one in tests).
    public init(domain: String, code: Int, message: String) {
        self.domain = domain
        self.code = code
        self.message = message
    }
}
