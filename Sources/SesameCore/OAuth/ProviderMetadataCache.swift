import FoundationEssentials
import Logging

/// Fetches and keeps each provider's discovery document and signing keys, refetching the keys
/// once when a token names a key the cache has not seen (Microsoft rolls keys over).
actor ProviderMetadataCache {
    private struct Entry {
        var configuration: OpenIDConfiguration
        var keys: JSONWebKeySet
        var fetchedAt: Date
    }

    private let transport: any HTTPTransport
    private let logger: Logger
    private var entries: [URL: Entry] = [:]
    private let maximumAge: TimeInterval = 24 * 60 * 60

    init(transport: any HTTPTransport, logger: Logger) {
        self.transport = transport
        self.logger = logger
    }

    /// The provider's metadata; `refreshKeys` refetches the JWKS even if cached.
    func metadata(discoveryURL: URL, refreshKeys: Bool = false, now: Date) async throws -> (OpenIDConfiguration, JSONWebKeySet) {
        if var entry = entries[discoveryURL], now.timeIntervalSince(entry.fetchedAt) < maximumAge {
            if refreshKeys {
                entry.keys = try await fetch(JSONWebKeySet.self, from: entry.configuration.jwksURI, what: "signing keys")
                entry.fetchedAt = now
                entries[discoveryURL] = entry
            }
            return (entry.configuration, entry.keys)
        }
        // One fetch per provider at a time: a caller that comes while one is on its way (the
        // sign-in's early fetch, say) waits for it rather than fetching again.
        let fetching =
            inFlight[discoveryURL]
            ?? Task {
                let configuration = try await fetch(OpenIDConfiguration.self, from: discoveryURL, what: "OpenID configuration")
                let keys = try await fetch(JSONWebKeySet.self, from: configuration.jwksURI, what: "signing keys")
                return Entry(configuration: configuration, keys: keys, fetchedAt: now)
            }
        inFlight[discoveryURL] = fetching
        defer { if inFlight[discoveryURL] == fetching { inFlight[discoveryURL] = nil } }
        let entry = try await fetching.value
        entries[discoveryURL] = entry
        return (entry.configuration, entry.keys)
    }

    /// Fetches the provider's metadata now if it is not kept yet, so that it is ready when the
    /// id_token arrives: a sign-in calls this when it starts, and the fetch runs while the user
    /// is at the pages instead of after the code is redeemed. A failure here is not reported
    /// (the id_token check fetches again and says why).
    func prefetch(discoveryURL: URL, now: Date) async {
        _ = try? await metadata(discoveryURL: discoveryURL, now: now)
    }

    private var inFlight: [URL: Task<Entry, any Error>] = [:]

    private func fetch<T: Decodable>(_ type: T.Type, from url: URL, what: String) async throws -> T {
        logger.debug("fetching \(what)", metadata: ["url": "\(url.redactingQuery)"])
        let response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: ["Accept": "application/json"]))
        guard response.isSuccess else {
            throw AccountStoreError(
                .providerMetadataUnavailable, "the identity provider's \(what) at \(url.redactingQuery) answered HTTP \(response.status)")
        }
        do {
            return try JSONDecoder().decode(T.self, from: response.body)
        } catch {
            throw AccountStoreError(
                .providerMetadataUnavailable, "the identity provider's \(what) at \(url.redactingQuery) could not be read: \(error)")
        }
    }
}
