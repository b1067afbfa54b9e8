import FoundationEssentials

extension SampleSettings {
    /// The same settings against a local identity emulator at `base`: every service URL (the
    /// authority, token and login endpoints, Microsoft Graph, the task API) keeps its path and
    /// query but moves to the emulator's scheme, host and port. The redirect URI stays as
    /// registered: it is intercepted, never loaded, and the emulator accepts Microsoft's. A
    /// `discoveryURL` of these shapes moves too: the emulator serves each tenant's discovery.
    public func pointed(at base: URL) -> SampleSettings {
        func move(_ url: URL) -> URL { url.rebased(onto: base) }
        switch self {
        case .graph(var settings):
            settings.authority = move(settings.authority)
            settings.graphURL = move(settings.graphURL)
            settings.discoveryURL = settings.discoveryURL.map(move)
            return .graph(settings)
        case .b2c(var settings):
            settings.authorizationURL = move(settings.authorizationURL)
            settings.tokenURL = move(settings.tokenURL)
            settings.loginURL = move(settings.loginURL)
            settings.taskAPI = move(settings.taskAPI)
            settings.discoveryURL = settings.discoveryURL.map(move)
            return .b2c(settings)
        case .msal(var settings):
            settings.authority = move(settings.authority)
            settings.graphURI = move(settings.graphURI)
            settings.discoveryURL = settings.discoveryURL.map(move)
            return .msal(settings)
        case .openID:
            // Another provider: the emulator does not stand in for it.
            return self
        }
    }
}

extension URL {
    /// This URL's path and query on another origin (`base`'s scheme, host, port and path prefix).
    func rebased(onto base: URL) -> URL {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: false),
            let origin = URLComponents(url: base, resolvingAgainstBaseURL: false)
        else { return self }
        components.scheme = origin.scheme
        components.host = origin.host
        components.port = origin.port
        let prefix = origin.path.hasSuffix("/") ? String(origin.path.dropLast()) : origin.path
        components.path = prefix + components.path
        return components.url ?? self
    }
}
