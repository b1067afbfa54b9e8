import FoundationEssentials
import SesameCore
import SesameGIO

extension HTTPTransportError.Kind {
    /// What a page load's failure (GIO's and its resolver's errors, as WebKit reports them) is,
    /// in the terms every other failed exchange is told in (``UserMessage``).
    init(loading error: GLibError) {
        switch (error.domain, error.code) {
        case ("g-io-error-quark", 39): self = .connectionRefused  // G_IO_ERROR_CONNECTION_REFUSED
        case ("g-io-error-quark", 28), ("g-resolver-error-quark", 0): self = .noSuchHost  // HOST_NOT_FOUND; G_RESOLVER_ERROR_NOT_FOUND
        case ("g-io-error-quark", 37), ("g-io-error-quark", 38): self = .networkUnreachable  // HOST_, NETWORK_UNREACHABLE
        case ("g-io-error-quark", 24): self = .timedOut  // G_IO_ERROR_TIMED_OUT
        case ("g-io-error-quark", 44): self = .brokenAnswer  // G_IO_ERROR_BROKEN_PIPE (CONNECTION_CLOSED)
        default: self = .unreachable
        }
    }
}
