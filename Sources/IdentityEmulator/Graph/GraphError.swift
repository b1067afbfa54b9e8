import FoundationEssentials
import HTTPTypes

/// Graph's error body: `{"error":{"code","message","innerError":{"date","request-id","client-request-id"}}}`.
struct GraphError: Error, Sendable {
    let status: Int
    /// `code`, e.g. `Request_UnsupportedQuery`, `InvalidAuthenticationToken`.
    let code: String
    /// `message`.
    let message: String

    static func unsupportedQuery(_ message: String) -> GraphError {
        GraphError(status: 400, code: "Request_UnsupportedQuery", message: message)
    }
    static func badRequest(_ message: String) -> GraphError { GraphError(status: 400, code: "BadRequest", message: message) }
    static func requestBadRequest(_ message: String) -> GraphError { GraphError(status: 400, code: "Request_BadRequest", message: message) }
    static func unauthenticated(_ message: String) -> GraphError {
        GraphError(status: 401, code: "InvalidAuthenticationToken", message: message)
    }
    static let insufficientPrivileges = GraphError(
        status: 403, code: "Authorization_RequestDenied", message: "Insufficient privileges to complete the operation.")

    static func notFound(_ id: String) -> GraphError {
        GraphError(
            status: 404, code: "Request_ResourceNotFound",
            message: "Resource '\(id)' does not exist or one of its queried reference-property objects are not present.")
    }

    static func unknownProperty(_ name: String) -> GraphError {
        .badRequest("Could not find a property named '\(name)' on type 'microsoft.graph.user'.")
    }

    static func unsupportedFilter(_ property: String) -> GraphError {
        .unsupportedQuery("Unsupported or invalid query filter clause specified for property '\(property)' of resource 'User'.")
    }

    static func needsAdvancedQuery(_ operatorName: String) -> GraphError {
        .unsupportedQuery(
            "Operator '\(operatorName)' is not supported because the required parameters might be missing. Try adding $count "
                + "with a value of true and the ConsistencyLevel header with a value of eventual."
        )
    }

    func body(requestID: String, clientRequestID: String, at time: Date) -> JSON {
        .object([
            (
                "error",
                .object([
                    ("code", .string(code)),
                    ("message", .string(message)),
                    (
                        "innerError",
                        .object([
                            ("date", .string(time.graphTimestamp)), ("request-id", .string(requestID)),
                            ("client-request-id", .string(clientRequestID)),
                        ])
                    ),
                ])
            )
        ])
    }
}
