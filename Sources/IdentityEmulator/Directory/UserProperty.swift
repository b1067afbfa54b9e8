/// A property of Graph's `user` resource, by its wire name.
public enum UserProperty: String, CaseIterable, Sendable {
    case id, userPrincipalName, displayName, givenName, surname, mail, businessPhones, mobilePhone
    case jobTitle, officeLocation, preferredLanguage

    /// Graph's default `$select` for users (the v1.0 list and get defaults).
    static let defaultSelection: [UserProperty] = [
        .businessPhones, .displayName, .givenName, .id, .jobTitle, .mail, .mobilePhone, .officeLocation,
        .preferredLanguage, .surname, .userPrincipalName,
    ]

    /// What `User.ReadBasic.All` reads of other users: the basic profile. The others (phones,
    /// job title, office, preferred language) need `User.Read.All` or `Directory.Read.All`; with
    /// the basic permission Graph answers them empty (`null`, `[]` for `businessPhones`).
    static let basicProfile: Set<UserProperty> = [.id, .displayName, .givenName, .surname, .mail, .userPrincipalName]

    /// The properties `startswith` and `eq` are indexed on.
    static let indexed: [UserProperty] = [.displayName, .givenName, .surname, .mail, .userPrincipalName]

    /// Looks a wire name up case-insensitively, as OData does for property names in `$filter`.
    init?(wireName: some StringProtocol) {
        guard let match = Self.allCases.first(where: { $0.rawValue.equalsIgnoringCase(String(wireName)) })
        else { return nil }
        self = match
    }

    /// The value as a single string for string functions (nil when the user has none).
    func text(of user: DirectoryUser) -> String? {
        switch self {
        case .id: user.id
        case .userPrincipalName: user.userPrincipalName
        case .displayName: user.displayName
        case .givenName: user.givenName
        case .surname: user.surname
        case .mail: user.mail
        case .businessPhones: user.businessPhones.first
        case .mobilePhone: user.mobilePhone
        case .jobTitle: user.jobTitle
        case .officeLocation: user.officeLocation
        case .preferredLanguage: user.preferredLanguage
        }
    }

    /// The value as JSON, or empty when the caller may not read it.
    func json(of user: DirectoryUser, readable: Bool) -> JSON {
        guard readable else { return self == .businessPhones ? .array([]) : .null }
        return json(of: user)
    }

    /// The value as JSON.
    func json(of user: DirectoryUser) -> JSON {
        switch self {
        case .businessPhones: .array(user.businessPhones.map(JSON.string))
        default: text(of: user).map(JSON.string) ?? .null
        }
    }
}
