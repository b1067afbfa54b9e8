import FoundationEssentials
import Hummingbird

/// The signed-in user's registered devices, as My Account shows them: `GET /me/registeredDevices`
/// lists them (Graph's `device` resources) and `DELETE /devices/{id}` removes one of the caller's
/// own (in Entra an administrator's right, or the user's in My Account; the emulator lets the
/// owner delete with `User.Read`). A removed device's PRTs stop working at once.
extension GraphController {
    func registeredDevices(_ request: Request) async -> Response {
        await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(request, needs: ["User.Read"])
            let owned = await devices.devices(ownedBy: caller.user.id)
            return .object([
                ("@odata.context", .string("\(root)/v1.0/$metadata#directoryObjects")),
                ("value", .array(owned.map(\.graphJSON))),
            ])
        }
    }

    func deleteDevice(_ request: Request, objectID: String) async -> Response {
        let answer = await graphResponse(request) { () throws(GraphError) in
            let caller = try graphCaller(request, needs: ["User.Read"])
            guard let device = await devices.device(objectID: objectID), device.ownerID == caller.user.id else { throw .notFound(objectID) }
            do {
                try await devices.remove(deviceID: device.deviceID)
            } catch {
                throw GraphError(status: 503, code: "serviceNotAvailable", message: "The device could not be removed: \(error)")
            }
            configuration.announce("device-removed \(device.deviceID)")
            return .null
        }
        return answer.status == .ok ? Response(status: .noContent, headers: [.requestID: answer.headers[.requestID] ?? ""]) : answer
    }
}
