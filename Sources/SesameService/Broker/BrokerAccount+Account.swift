import FoundationEssentials
import SesameCore

extension BrokerAccount {
    /// `account` as the broker client knows it: its ids, the tenant from `client_info` when the
    /// cache's realm is a generic one, and `clientInfo` made from the home account id.
    init(_ account: Account) {
        self.init(
            homeAccountID: account.homeAccountID, localAccountID: account.localAccountID, environment: account.environment,
            realm: account.realm, username: account.username)
        name = account.name ?? ""
        let parts = account.homeAccountID.split(separator: ".", maxSplits: 1).map(String.init)
        if parts.count == 2 {
            let json = #"{"uid":"\#(parts[0])","utid":"\#(parts[1])"}"#
            clientInfo = Base64URL.encode(Data(json.utf8))
            if realm.isEmpty || ["organizations", "common", "consumers"].contains(realm) { realm = parts[1] }
        }
    }
}
