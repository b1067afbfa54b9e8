import FoundationEssentials
import HTTPTypes
import Hummingbird

/// The B2C sample's task API.
struct TaskController: EmulatorController {
    let services: EmulatorServices

    private struct TaskFailure: Error {
        let status: HTTPResponse.Status
        let message: String
    }

    private func taskResponse(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let failure as TaskFailure {
            return .json(.object([("Message", .string(failure.message))]), status: failure.status)
        } catch {
            return .json(.object([("Message", .string("An error has occurred."))]), status: .internalServerError)
        }
    }

    /// The caller's `oid`, once the token is the task API's and carries `permission` in `scp`.
    private func taskOwner(_ request: Request, permission: String) throws -> String {
        let denied = TaskFailure(status: .unauthorized, message: "Authorization has been denied for this request.")
        guard let token = request.bearerToken, let claims = try? services.keys.verify(token) else { throw denied }
        guard claims["iss"] as? String == issuer.issuer(for: fabrikam.tenant),
            claims["aud"] as? String == ClientRegistration.taskAPIAppID,
            let exp = claims["exp"] as? Double, exp > clock.now.timeIntervalSince1970,
            let oid = claims["oid"] as? String
        else { throw denied }
        let scopes = (claims["scp"] as? String ?? "").split(separator: " ")
        guard scopes.contains(Substring(permission)) else {
            let reason = "The Scope claim does not contain the \(permission) permission."
            throw TaskFailure(status: .init(code: 401, reasonPhrase: reason), message: reason)
        }
        return oid
    }

    func listTasks(_ request: Request) async -> Response {
        await taskResponse {
            let owner = try taskOwner(request, permission: "read")
            return .json(.array(await tasks.tasks(owner: owner).map(\.json)))
        }
    }

    func addTask(_ request: Request) async -> Response {
        await taskResponse {
            let owner = try taskOwner(request, permission: "write")
            let body = try await request.bodyText(limit: 64 * 1024)
            let text = (JSON.parseObject(Data(body.utf8))?["Text"] as? String)?.trimmingWhitespace() ?? ""
            guard !text.isEmpty else { throw TaskFailure(status: .badRequest, message: "Please provide a task description") }
            let key = request.headers[values: HTTPField.Name("Idempotency-Key")!].first
            if let key, key.isEmpty || key.count > 200 {
                throw TaskFailure(status: .badRequest, message: "Idempotency-Key must be 1 to 200 characters")
            }
            _ = try await tasks.add(text: text, owner: owner, idempotencyKey: key, now: clock.now)
            return Response(status: .noContent)
        }
    }

    func deleteTask(_ request: Request, id: String) async -> Response {
        await taskResponse {
            let owner = try taskOwner(request, permission: "write")
            guard let number = Int(id), try await tasks.delete(id: number, owner: owner) else {
                throw TaskFailure(status: .notFound, message: "No task \(id) belongs to you.")
            }
            return Response(status: .noContent)
        }
    }
}
