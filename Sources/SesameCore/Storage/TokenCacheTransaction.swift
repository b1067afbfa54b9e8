import Foundation
import Logging

/// One read or read-modify-write of a storage group's ``TokenCache`` under the storage's
/// cross-process lock. An unreadable cache (truncated, corrupt, foreign) is set aside where a
/// person can inspect it and replaced by an empty one; the caller learns where it went.
struct TokenCacheTransaction: Sendable {
    let storage: any TokenStorage
    let logger: Logger

    /// What a transaction returned, and where an unreadable cache was set aside, if one was.
    struct Result<Value> {
        var value: Value
        var setAsideAt: String?
    }

    /// Runs `body` on the group's cache; writes the cache back when `write` is true.
    func run<Value: Sendable>(
        group: String, write: Bool, _ body: (inout TokenCache) throws -> Value
    ) throws(AccountStoreError) -> Result<Value> {
        var value: Value?
        do {
            let setAside = try storage.transact(group: group) { data in
                var cache = TokenCache()
                var unreadable = false
                if let data {
                    do {
                        cache = try TokenCache(json: data)
                    } catch {
                        unreadable = true
                        logger.error("token cache unreadable; starting empty", metadata: ["group": "\(group)", "error": "\(error)"])
                    }
                }
                value = try body(&cache)
                if unreadable { return .setAsideAndWrite(try cache.jsonData()) }
                return write ? .write(try cache.jsonData()) : .keep
            }
            if let setAside {
                logger.error("unreadable token cache set aside", metadata: ["group": "\(group)", "path": "\(setAside)"])
            }
            guard let value else {
                throw AccountStoreError(.invalidResponse, "The token storage at \(storage.location) did not run the transaction.")
            }
            return Result(value: value, setAsideAt: setAside)
        } catch let error as AccountStoreError {
            throw error
        } catch {
            throw AccountStoreError(.invalidResponse, "The token cache could not be used: \(error)")
        }
    }
}
