import FoundationEssentials
import Logging
import SesameSystem

/// One read or read-modify-write of a storage group's ``TokenCache`` under the storage's
/// cross-process lock. An unreadable cache (truncated, corrupt, foreign) is set aside where a
/// person can inspect it and replaced by an empty one; the caller learns where it went.
///
/// Every access sees what any process stored last, yet unchanged bytes are not read again: a
/// read keeps its parsed copy under the storage's stamp (``TokenStorage/version(group:)``, taken
/// under the lock with the read), and the next read uses the copy while the stamp is the same —
/// no lock, no read, no parse.
struct TokenCacheTransaction: Sendable {
    let storage: any TokenStorage
    let logger: Logger
    /// Where a rotated refresh token waits when the cache cannot store it.
    let rescue: RefreshRescue
    /// The last read of each group.
    private var readCopies: [String: ReadCopy] = [:]

    init(storage: any TokenStorage, logger: Logger, rescue: RefreshRescue) {
        self.storage = storage
        self.logger = logger
        self.rescue = rescue
    }

    /// A group's cache as last read, and the storage's stamp when it was.
    struct ReadCopy: Sendable {
        var version: StoredVersion
        var cache: TokenCache
        var readAt: ContinuousClock.Instant

        /// Whether the stored bytes are still the ones read (the same stamp, within its age limit).
        func isCurrent(in storage: any TokenStorage, group: String) -> Bool {
            guard let current = storage.version(group: group), current == version else { return false }
            return version.maximumAge.map { readAt.duration(to: .now) < $0 } ?? true
        }
    }

    /// The last read of `group`, if one is kept.
    func readCopy(of group: String) -> ReadCopy? { readCopies[group] }

    /// Drops `group`'s read copy: the next access reads the stored bytes. Under the refresh lock,
    /// whose point is to see what the program that held it before stored: the kernel's event for
    /// that write may not have been read yet, so the stamp cannot be trusted to have moved.
    mutating func forgetReadCopy(of group: String) { readCopies[group] = nil }

    /// Runs `body` on a group's cache: on the last read's copy when `write` is false and the
    /// stored bytes are unchanged, else in one transaction (a read keeps its copy).
    mutating func access<Value: Sendable>(
        group: String, write: Bool, _ body: (inout TokenCache) throws -> Value
    ) throws(AccountStoreError) -> Result<Value> {
        if !write, let copy = readCopies[group], copy.isCurrent(in: storage, group: group) {
            var cache = copy.cache
            do {
                return Result(value: try body(&cache), setAsideAt: nil)
            } catch let error as AccountStoreError {
                throw error
            } catch {
                throw AccountStoreError(.invalidResponse, "The token cache could not be used: \(error)")
            }
        }
        readCopies[group] = nil
        var read: ReadCopy?
        let storage = storage
        let result = try run(group: group, write: write) { cache in
            // Still under the lock: no process can have written since the bytes were read.
            if !write, let version = storage.version(group: group) { read = ReadCopy(version: version, cache: cache, readAt: .now) }
            return try body(&cache)
        }
        if result.setAsideAt == nil, let read { readCopies[group] = read }
        return result
    }

    /// What a transaction returned, and where an unreadable cache was set aside, if one was.
    struct Result<Value: Sendable>: Sendable {
        var value: Value
        var setAsideAt: String?
    }

    /// Runs `body` on the group's cache; writes the cache back when `write` is true.
    func run<Value: Sendable>(
        group: String, write: Bool, _ body: (inout TokenCache) throws -> Value
    ) throws(AccountStoreError) -> Result<Value> {
        var value: Value?
        do {
            func decide(_ data: Data?) throws -> TokenStorageAction {
                var cache = TokenCache()
                var unreadable = false
                if let data {
                    do {
                        cache = try TokenCache(json: data)
                    } catch {
                        // The bytes were read under every writer's lock (Sesame's, and the
                        // MSAL-based tools', which rewrite the file in place): not a write in
                        // progress, but a cache no writer will finish.
                        unreadable = true
                        logger.error("token cache unreadable; starting empty", metadata: ["group": "\(group)", "error": "\(error)"])
                    }
                }
                value = try body(&cache)
                if unreadable { return .setAsideAndWrite(try cache.jsonData()) }
                return write ? .write(try cache.jsonData()) : .keep
            }
            // A write is not cut short by SIGTERM or Ctrl+C (``Termination``): the process ends after it.
            let setAside =
                write
                ? try Termination.shared.deferring { try storage.transact(group: group, decide) }
                : try storage.transact(group: group, decide)
            if let setAside {
                logger.error("unreadable token cache set aside", metadata: ["group": "\(group)", "path": "\(setAside)"])
            }
            guard let value else {
                throw AccountStoreError(.invalidResponse, "The token storage at \(storage.location) did not run the transaction.")
            }
            return Result(value: value, setAsideAt: setAside)
        } catch let error as AccountStoreError {
            throw error
        } catch let error as TokenStorageError {
            throw AccountStoreError.from(error)
        } catch let ending as Termination.Ending {
            throw AccountStoreError(.cancelled, "The program is ending (\(Termination.name(of: ending.signal))); nothing was stored.")
        } catch {
            throw AccountStoreError(.invalidResponse, "The token cache could not be used: \(error)")
        }
    }

    /// Puts the refresh tokens an earlier refresh could not store (``RefreshRescue``) into the
    /// group's cache, and lets go of them once it holds them. Called under the refresh lock: no
    /// other Sesame process refreshes meanwhile.
    /// - Returns: what is still kept and not in the cache (it cannot be written now either), for
    ///   the caller to use from memory.
    mutating func recoverRescued(group: String, now: Date) -> [RefreshRescue.Kept] {
        let kept = rescue.read(group: group)
        readCopies[group] = nil
        do {
            let applied = try run(group: group, write: true) { RefreshRescue.apply(kept, to: &$0, now: Int(now.timeIntervalSince1970)) }
            rescue.clear(group: group)
            logger.notice("rescued refresh tokens stored", metadata: ["group": "\(group)", "count": "\(applied.value)"])
            return []
        } catch {
            logger.error("rescued refresh tokens still cannot be stored", metadata: ["group": "\(group)", "error": "\(error)"])
            return kept
        }
    }

    /// Keeps `kept` in the rescue: the cache failed (`failure`) to store the refresh that rotated it.
    func keepAside(_ kept: RefreshRescue.Kept, group: String, failure: AccountStoreError) {
        do {
            try rescue.keep(kept, group: group)
            logger.error("refresh answer not stored; its refresh token kept for the next attempt", metadata: ["error": "\(failure)"])
        } catch {
            logger.critical("refresh answer neither stored nor kept", metadata: ["error": "\(failure)", "rescue": "\(error)"])
        }
    }

    /// ``TokenStorage/reserveRoom(group:)``, its failure as the store's.
    func reserveRoom(group: String) throws(AccountStoreError) {
        do {
            try storage.reserveRoom(group: group)
        } catch let error as TokenStorageError {
            throw AccountStoreError.from(error)
        } catch {
            throw AccountStoreError(.invalidResponse, "The token cache could not be used: \(error)")
        }
    }
}
