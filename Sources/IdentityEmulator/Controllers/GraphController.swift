import FoundationEssentials
import HTTPTypes
import Hummingbird

/// Microsoft Graph's users API (and `/me`, `revokeSignInSessions`, `userinfo`).
struct GraphController: EmulatorController {
    let services: EmulatorServices

    static let graphContentType = "application/json;odata.metadata=minimal;odata.streaming=true;IEEE754Compatible=false;charset=utf-8"

    /// The signed-in caller of a Graph request.
    struct GraphCaller {
        let user: DirectoryUser
        let scopes: Set<String>

        /// Whether the caller may read `property` of `other`: all of their own profile (User.Read),
        /// the basic profile of others with User.ReadBasic.All, everything with User.Read.All or
        /// Directory.Read.All.
        func mayRead(_ property: UserProperty, of other: DirectoryUser, lenient: Bool) -> Bool {
            lenient || other.id == user.id || UserProperty.basicProfile.contains(property)
                || !scopes.isDisjoint(with: ["User.Read.All", "Directory.Read.All"])
        }
    }

    func graphResponse(_ request: Request, _ body: () async throws(GraphError) -> JSON) async -> Response {
        let requestID = Identifiers.guid()
        let clientRequestID = request.headers[.clientRequestID] ?? requestID
        var headers: HTTPFields = [.contentType: Self.graphContentType, .requestID: requestID, .clientRequestID: clientRequestID]
        do {
            return .json(try await body(), headers: headers)
        } catch {
            if error.status == 401 {
                headers[.wwwAuthenticate] =
                    "Bearer realm=\"\", authorization_uri=\"\(root)/common/oauth2/authorize\", client_id=\"\(ScopeRequest.graphAppID)\""
            }
            return .json(
                error.body(requestID: requestID, clientRequestID: clientRequestID, at: clock.now), status: .init(code: error.status),
                headers: headers)
        }
    }

    /// Checks the bearer token as Graph does, with Graph's messages.
    func graphCaller(_ request: Request, needs required: [String]) throws(GraphError) -> GraphCaller {
        guard let token = request.bearerToken else { throw .unauthenticated("Access token is empty.") }
        let claims: [String: Any]
        do {
            claims = try services.keys.verify(token)
        } catch .malformed {
            throw .unauthenticated("CompactToken parsing failed with error code: 80049217")
        } catch {
            throw .unauthenticated("Access token validation failure.")
        }
        guard claims["aud"] as? String == ScopeRequest.graphAppID || claims["aud"] as? String == "https://graph.microsoft.com" else {
            throw .unauthenticated("Access token validation failure. Invalid audience.")
        }
        let now = clock.now.timeIntervalSince1970
        guard let exp = claims["exp"] as? Double, let nbf = claims["nbf"] as? Double, nbf <= now + 300, exp > now else {
            throw .unauthenticated("Access token has expired or is not yet valid.")
        }
        guard claims["iss"] as? String == "https://sts.windows.net/\(contoso.tenant.id)/",
            let oid = claims["oid"] as? String, let user = contoso.user(id: oid)
        else {
            throw .unauthenticated("Access token validation failure. Invalid issuer.")
        }
        let scopes = Set((claims["scp"] as? String ?? "").split(separator: " ").map(String.init))
        guard required.isEmpty || !scopes.isDisjoint(with: required) else { throw .insufficientPrivileges }
        return GraphCaller(user: user, scopes: scopes)
    }

    private static let readUsers = ["User.ReadBasic.All", "User.Read.All", "Directory.Read.All"]

    func graphMe(_ request: Request) async -> Response {
        await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(request, needs: ["User.Read"] + Self.readUsers)
            let query = try UserQuery.parse(request.queryFields, eventualConsistency: false)
            return entity(caller.user, select: query.select, caller: caller)
        }
    }

    func graphUser(_ request: Request, id: String) async -> Response {
        if id == "$count" { return await graphCount(request) }
        return await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(request, needs: Self.readUsers)
            let query = try UserQuery.parse(request.queryFields, eventualConsistency: false)
            guard let user = contoso.user(idOrPrincipalName: id) else { throw .notFound(id) }
            return entity(user, select: query.select, caller: caller)
        }
    }

    private func entity(_ user: DirectoryUser, select: [UserProperty]?, caller: GraphCaller) -> JSON {
        let properties = select ?? UserProperty.defaultSelection
        let context =
            select.map { "\(root)/v1.0/$metadata#users(\($0.map(\.rawValue).joined(separator: ",")))/$entity" }
            ?? "\(root)/v1.0/$metadata#users/$entity"
        return .object(
            [("@odata.context", .string(context))]
                + properties.map {
                    ($0.rawValue, $0.json(of: user, readable: caller.mayRead($0, of: user, lenient: configuration.lenient)))
                })
    }

    func graphUsers(_ request: Request) async -> Response {
        let eventual = request.headers[.consistencyLevel]?.lowercased() == "eventual"
        return await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(request, needs: Self.readUsers)
            let query = try UserQuery.parse(request.queryFields, eventualConsistency: eventual)
            let properties = query.select ?? UserProperty.defaultSelection
            let (total, page) = contoso.read { users, index in
                let ordinals = query.run(users: users, index: index)
                let end = min(ordinals.count, query.offset + query.top)
                let page = query.offset < end ? ordinals[query.offset..<end].map { users[$0] } : []
                return (ordinals.count, page)
            }
            let context =
                query.select.map { "\(root)/v1.0/$metadata#users(\($0.map(\.rawValue).joined(separator: ",")))" }
                ?? "\(root)/v1.0/$metadata#users"
            var members: [(String, JSON)] = [("@odata.context", .string(context))]
            if query.count, query.offset == 0 { members.append(("@odata.count", .int(total))) }
            if query.offset + query.top < total {
                members.append(("@odata.nextLink", .string(nextLink(request, offset: query.offset + query.top))))
            }
            let lenient = configuration.lenient
            members.append(
                (
                    "value",
                    .array(
                        page.map { user in
                            .object(
                                properties.map {
                                    ($0.rawValue, $0.json(of: user, readable: caller.mayRead($0, of: user, lenient: lenient)))
                                })
                        })
                ))
            return .object(members)
        }
    }

    /// The same URL with every original query option and the next `$skiptoken`.
    private func nextLink(_ request: Request, offset: Int) -> String {
        let kept = (request.uri.query ?? "").split(separator: "&").filter {
            !$0.lowercased().hasPrefix("$skiptoken=") && !$0.lowercased().hasPrefix("%24skiptoken=")
        }
        let query = (kept + ["$skiptoken=\(UserQuery.skipToken(offset: offset))"]).joined(separator: "&")
        return "\(root)\(request.uri.path)?\(query)"
    }

    /// `GET /v1.0/users/$count` (needs `ConsistencyLevel: eventual`): a plain-text number.
    private func graphCount(_ request: Request) async -> Response {
        guard request.headers[.consistencyLevel]?.lowercased() == "eventual" else {
            return await graphResponse(request) { () throws(GraphError) in
                _ = try graphCaller(request, needs: Self.readUsers)
                throw .requestBadRequest("$count is not currently supported.")
            }
        }
        do {
            _ = try graphCaller(request, needs: Self.readUsers)
        } catch {
            return await graphResponse(request) { () throws(GraphError) in throw error }
        }
        return .text(String(contoso.count))
    }

    func graphRevoke(_ request: Request, id: String?) async -> Response {
        await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(
                request, needs: id == nil ? ["User.Read"] + Self.readUsers : ["User.ReadWrite.All", "Directory.ReadWrite.All"])
            let user =
                try id.map { key throws(GraphError) in
                    guard let user = contoso.user(idOrPrincipalName: key) else { throw .notFound(key) }
                    return user
                } ?? caller.user
            await state.revokeSignInSessions(userID: user.id, now: clock.now)
            return .object([("@odata.context", .string("\(root)/v1.0/$metadata#Edm.Boolean")), ("value", .bool(true))])
        }
    }

    func userInfo(_ request: Request) async -> Response {
        await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(request, needs: [])
            let user = caller.user
            return .members([
                ("sub", .string(TokenIssuer.pairwiseSubject(userID: user.id, clientID: ScopeRequest.graphAppID))),
                ("name", .string(user.displayName)), ("family_name", .string(user.surname)), ("given_name", .string(user.givenName)),
                ("picture", .string("\(root)/v1.0/me/photo/$value")), ("email", user.mail.map(JSON.string)),
            ])
        }
    }
}
