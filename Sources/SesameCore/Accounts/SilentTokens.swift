import Foundation

/// What makes a silent token cheap and a refresh happen once: the last answer to each question
/// (reused while the stored bytes it came from are unchanged and the token has five minutes
/// left), and the queue of refreshes under way — callers asking the same join one refresh;
/// refreshes of one account for different scopes take turns, so that one refresh token is never
/// redeemed twice at once (each turn reads the token the previous one rotated in). The account
/// store owns one and is its only user (on its actor).
struct SilentTokens {
    /// A silent token request: whose, and for which scopes (`nil`: the account type's own).
    struct Question: Hashable {
        var accountType: String
        var homeAccountID: String
        var scopes: [String]?
    }

    /// One refresh: the account, and the resource scopes it gets a token for.
    struct Refresh {
        /// The account's turn: refreshes of one account wait for each other.
        let account: String
        /// The refresh itself: callers with the same key join it.
        let key: String

        init(account: Account, scopes: Set<String>) {
            self.account = "\(account.accountType)|\(account.homeAccountID)"
            key = self.account + "|" + scopes.map { $0.lowercased() }.sorted().joined(separator: " ")
        }
    }

    /// A token given from the cache, and the read of the stored bytes it came from.
    private struct Answer {
        var token: AccessToken
        var group: String
        var read: TokenCacheTransaction.ReadCopy
    }

    private var answers: [Question: Answer] = [:]
    /// The refresh under way per (account, scopes), which callers for those scopes join.
    private var refreshes: [String: Task<AccessToken, any Error>] = [:]
    /// The latest refresh per account, which the next one for other scopes waits for.
    private var lastRefresh: [String: Task<AccessToken, any Error>] = [:]

    /// The last answer to `question`, if it still is the answer: the stored bytes have the same
    /// stamp (within its age limit) and the token has five minutes left.
    func answer(to question: Question, storage: any TokenStorage, now: Date) -> AccessToken? {
        guard let answer = answers[question],
            answer.token.expiresOn.timeIntervalSince(now) > AccountStore.minimumRemainingValidity,
            answer.read.isCurrent(in: storage, group: answer.group)
        else { return nil }
        return answer.token
    }

    /// Remembers `token`, read from `group`'s cache copy `read`, as the answer to `question`.
    mutating func remember(_ token: AccessToken, for question: Question, group: String, read: TokenCacheTransaction.ReadCopy?) {
        guard let read else { return }
        answers[question] = Answer(token: token, group: group, read: read)
    }

    /// The refresh under way for `refresh`'s key, or a new one made by `start`, which is given the
    /// account's previous refresh to wait for.
    mutating func refreshing(
        _ refresh: Refresh, start: (Task<AccessToken, any Error>?) -> Task<AccessToken, any Error>
    ) -> Task<AccessToken, any Error> {
        if let running = refreshes[refresh.key] { return running }
        let task = start(lastRefresh[refresh.account])
        refreshes[refresh.key] = task
        lastRefresh[refresh.account] = task
        return task
    }

    /// `task` has ended: later callers start a refresh of their own.
    mutating func ended(_ task: Task<AccessToken, any Error>, _ refresh: Refresh) {
        if refreshes[refresh.key] == task { refreshes[refresh.key] = nil }
        if lastRefresh[refresh.account] == task { lastRefresh[refresh.account] = nil }
    }
}
