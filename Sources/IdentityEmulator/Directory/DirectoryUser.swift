import Crypto
import FoundationEssentials

/// One user of a directory: the Graph `user` resource's properties plus what sign-in needs.
public struct DirectoryUser: Sendable, Hashable, Codable {
    /// `id`: the object id (the `oid` claim).
    public var id: String
    /// `userPrincipalName`, e.g. `alex@contoso.onmicrosoft.com`; the B2C sign-in name (an email).
    public var userPrincipalName: String
    /// `displayName`.
    public var displayName: String
    /// `givenName`.
    public var givenName: String
    /// `surname`.
    public var surname: String
    /// `mail`; some users have none (JSON null).
    public var mail: String?
    /// `businessPhones`: always an array, possibly empty.
    public var businessPhones: [String]
    /// `mobilePhone`; the SMS second factor is sent here.
    public var mobilePhone: String?
    /// `jobTitle`.
    public var jobTitle: String?
    /// `officeLocation`.
    public var officeLocation: String?
    /// `preferredLanguage`, e.g. `en-US`, `es-ES`, `el-GR`, `zh-CN`.
    public var preferredLanguage: String?
    /// A salted SHA-256 of the password: the state directory never holds a password.
    var passwordDigest: String
    /// Whether sign-in asks for an SMS code after the password.
    public var requiresMFA: Bool

    public init(
        id: String, userPrincipalName: String, displayName: String, givenName: String, surname: String,
        mail: String?, businessPhones: [String] = [], mobilePhone: String? = nil, jobTitle: String? = nil,
        officeLocation: String? = nil, preferredLanguage: String? = nil, password: String, requiresMFA: Bool = false
    ) {
        self.id = id
        self.userPrincipalName = userPrincipalName
        self.displayName = displayName
        self.givenName = givenName
        self.surname = surname
        self.mail = mail
        self.businessPhones = businessPhones
        self.mobilePhone = mobilePhone
        self.jobTitle = jobTitle
        self.officeLocation = officeLocation
        self.preferredLanguage = preferredLanguage
        self.passwordDigest = Self.digest(password: password)
        self.requiresMFA = requiresMFA
    }

    func checks(password candidate: String) -> Bool { Self.digest(password: candidate) == passwordDigest }

    static func digest(password: String) -> String {
        Base64URL.encode(SHA256.hash(data: Data("identity-emulator|\(password)".utf8)))
    }

    /// The mobile number as the SMS page shows it: `+X XXXXXXX12`.
    var maskedMobile: String {
        guard let mobile = mobilePhone else { return "your phone" }
        let digits = mobile.filter(\.isNumber)
        return "+X XXXXXXX" + String(digits.suffix(2))
    }
}
