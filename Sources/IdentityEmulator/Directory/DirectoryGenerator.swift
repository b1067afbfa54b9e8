import FoundationEssentials

/// Builds a tenant's users from a seed: the fixed demo accounts first, then generated people
/// with English, Spanish, Greek and Chinese names (some with apostrophes, some without mail,
/// some with several business phones). The same seed and count always give the same directory.
enum DirectoryGenerator {
    /// The password of every emulated user.
    static let password = "Passw0rd!"

    /// Contoso's fixed users: the demo accounts, one user per naming case worth testing, and the
    /// users of its federated domain `fabrikam.example`.
    static let contosoFixedUsers: [DirectoryUser] = [
        DirectoryUser(
            id: "4c1b9a54-7f4e-4f2b-9a5f-2a0c6c1d7e01", userPrincipalName: "alex@contoso.onmicrosoft.com",
            displayName: "Alex Wilber", givenName: "Alex", surname: "Wilber", mail: "alex@contoso.com",
            businessPhones: ["+1 858 555 0110"], mobilePhone: nil, jobTitle: "Marketing Assistant",
            officeLocation: "131/1104", preferredLanguage: "en-US", password: password),
        DirectoryUser(
            id: "48d31887-5fad-4d73-a9f5-3c356e68a038", userPrincipalName: "megan@contoso.onmicrosoft.com",
            displayName: "Megan Bowen", givenName: "Megan", surname: "Bowen", mail: "megan@contoso.com",
            businessPhones: ["+1 412 555 0109"], mobilePhone: "+1 412 555 0199", jobTitle: "Marketing Manager",
            officeLocation: "12/1110", preferredLanguage: "en-US", password: password, requiresMFA: true),
        DirectoryUser(
            id: "2f6c8e0a-1b3d-4e5f-8a7b-9c0d1e2f3a42", userPrincipalName: "sean.obrien@contoso.onmicrosoft.com",
            displayName: "Seán O'Brien", givenName: "Seán", surname: "O'Brien", mail: "sean.obrien@contoso.com",
            businessPhones: ["+353 1 555 0142", "+353 1 555 0143", "+1 425 555 0144"], mobilePhone: "+353 87 555 0145",
            jobTitle: "Support Engineer", officeLocation: "Dublin", preferredLanguage: "en-IE", password: password),
        DirectoryUser(
            id: "6a7b8c9d-0e1f-4a2b-9c3d-4e5f6a7b8c63", userPrincipalName: "lucia.garcia@contoso.onmicrosoft.com",
            displayName: "Lucía García", givenName: "Lucía", surname: "García", mail: nil,
            businessPhones: [], mobilePhone: "+34 600 555 063", jobTitle: "Diseñadora",
            officeLocation: "Madrid", preferredLanguage: "es-ES", password: password),
        DirectoryUser(
            id: "7b8c9d0e-1f2a-4b3c-8d4e-5f6a7b8c9d74", userPrincipalName: "giorgos.papadopoulos@contoso.onmicrosoft.com",
            displayName: "Γιώργος Παπαδόπουλος", givenName: "Γιώργος", surname: "Παπαδόπουλος",
            mail: "giorgos.papadopoulos@contoso.com", businessPhones: ["+30 210 555 0174"], mobilePhone: nil,
            jobTitle: "Μηχανικός λογισμικού", officeLocation: "Athens", preferredLanguage: "el-GR", password: password),
        DirectoryUser(
            id: "8c9d0e1f-2a3b-4c4d-9e5f-6a7b8c9d0e85", userPrincipalName: "wang.wei@contoso.onmicrosoft.com",
            displayName: "王伟", givenName: "伟", surname: "王", mail: "wang.wei@contoso.com",
            businessPhones: ["+86 10 5555 0185", "+86 10 5555 0186"], mobilePhone: "+86 139 5555 0187",
            jobTitle: "产品经理", officeLocation: "Shanghai", preferredLanguage: "zh-CN", password: password),
        // fabrikam.example is a federated domain (``FederatedDomain``): Fabrikam's AD FS checks
        // these users' passwords, never Entra's password page.
        DirectoryUser(
            id: "5d2e8f1a-3c4b-4a6d-9e7f-1a2b3c4d5e96", userPrincipalName: "pat@fabrikam.example",
            displayName: "Pat Kowalski", givenName: "Pat", surname: "Kowalski", mail: "pat@fabrikam.example",
            businessPhones: ["+1 206 555 0131"], mobilePhone: "+1 206 555 0136", jobTitle: "Logistics Coordinator",
            officeLocation: "Redmond/2210", preferredLanguage: "en-US", password: password),
        DirectoryUser(
            id: "6e3f9a2b-4d5c-4b7e-8f9a-2b3c4d5e6f07", userPrincipalName: "lee@fabrikam.example",
            displayName: "Lee Chen", givenName: "Lee", surname: "Chen", mail: "lee@fabrikam.example",
            businessPhones: ["+1 206 555 0132"], mobilePhone: nil, jobTitle: "Sales Director",
            officeLocation: "Seattle/0412", preferredLanguage: "en-US", password: password),
    ]

    /// Fabrikam's B2C consumers; sign-up adds more.
    static let fabrikamFixedUsers: [DirectoryUser] = [
        DirectoryUser(
            id: "b6a2f0c4-3d1e-4f5a-8b7c-9d0e1f2a3b01", userPrincipalName: "sam@example.com",
            displayName: "Sam Carter", givenName: "Sam", surname: "Carter", mail: "sam@example.com", password: password),
        DirectoryUser(
            id: "c7b3a1d5-4e2f-4a6b-9c8d-0e1f2a3b4c02", userPrincipalName: "kim@example.com",
            displayName: "Kim Abercrombie", givenName: "Kim", surname: "Abercrombie", mail: "kim@example.com",
            password: password),
    ]

    /// A name in its own script and the ASCII form used for user principal names.
    private struct Name {
        let native: String
        let ascii: String
        init(_ native: String, _ ascii: String? = nil) {
            self.native = native
            self.ascii = (ascii ?? Self.withoutDiacritics(native))
                .lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber) }
        }

        /// The name's Latin letters without their accents (`José Núñez` → `Jose Nunez`), as the
        /// directory's e-mail addresses spell them.
        static func withoutDiacritics(_ name: String) -> String {
            String(
                name.map { character in
                    for (plain, accented) in accents where accented.contains(character) { return plain }
                    return character
                })
        }

        private static let accents: [(Character, String)] = [
            ("a", "áàâäãåā"), ("A", "ÁÀÂÄÃÅĀ"), ("e", "éèêëē"), ("E", "ÉÈÊËĒ"), ("i", "íìîïī"), ("I", "ÍÌÎÏĪ"),
            ("o", "óòôöõøō"), ("O", "ÓÒÔÖÕØŌ"), ("u", "úùûüū"), ("U", "ÚÙÛÜŪ"), ("n", "ñ"), ("N", "Ñ"), ("c", "ç"),
            ("C", "Ç"), ("y", "ýÿ"), ("Y", "Ý"),
        ]
    }

    private struct Culture {
        let given: [Name]
        let surnames: [Name]
        /// Chinese names are written surname first, without a space.
        let surnameFirst: Bool
        let languages: [String]
        let phonePrefix: String
        let offices: [String]
        let jobs: [String]
        let weight: Int
    }

    private static let cultures: [Culture] = [
        Culture(
            given: [
                "Adele", "Allan", "Ben", "Brian", "Christie", "Debra", "Diego", "Emily", "Enrico", "Grady",
                "Henrietta", "Irvin", "Isaiah", "Johanna", "Joni", "Lee", "Lidia", "Lynne", "Miriam", "Nestor",
                "Patti", "Pradeep", "Sean", "Kate", "Liam", "Olivia", "Noah", "Emma", "James", "Mary", "Mark",
                "Megan", "Michael", "Sarah", "Grace", "Owen", "Zoe", "Nathan", "Chloe", "Ryan",
            ].map { Name($0) },
            surnames: [
                "Vance", "Smith", "Johnson", "Williams", "Brown", "Jones", "Miller", "Davis", "Wilson",
                "Taylor", "Clark", "O'Brien", "O'Connor", "O'Neill", "D'Arcy", "McKay", "Archer", "Gonzales",
                "Patel", "Nguyen", "Stevens", "Bell", "Hughes", "Ward", "Warren", "Young", "Meyer", "Fischer",
                "Brooks", "Price", "Bennett", "Murphy",
            ].map { Name($0) },
            surnameFirst: false, languages: ["en-US", "en-GB"], phonePrefix: "+1 425 555 ",
            offices: ["Redmond", "London", "New York", "Building 18/1104", "Seattle"],
            jobs: [
                "Software Engineer", "Sales Representative", "Product Manager", "Designer", "Accountant",
                "HR Generalist", "Support Engineer", "Director", "Data Analyst", "Marketing Manager",
            ],
            weight: 45),
        Culture(
            given: [
                "José", "María", "Lucía", "Álvaro", "Sofía", "Javier", "Carmen", "Alejandro", "Isabel", "Mateo",
                "Valentina", "Pilar", "Andrés", "Rocío", "Íñigo", "Elena", "Pablo", "Nuria",
            ].map { Name($0) },
            surnames: [
                "García", "Fernández", "López", "Martínez", "Sánchez", "Pérez", "Gómez", "Martín", "Jiménez",
                "Ruiz", "Hernández", "Díaz", "Moreno", "Muñoz", "Álvarez", "Romero", "Castillo", "Ortega",
                "Núñez",
            ].map { Name($0) },
            surnameFirst: false, languages: ["es-ES", "es-MX"], phonePrefix: "+34 91 555 ",
            offices: ["Madrid", "Barcelona", "Ciudad de México"],
            jobs: ["Ingeniera de software", "Representante de ventas", "Jefe de producto", "Contable", "Diseñador"],
            weight: 20),
        Culture(
            given: [
                Name("Γιώργος", "giorgos"), Name("Ελένη", "eleni"), Name("Νίκος", "nikos"), Name("Μαρία", "maria"),
                Name("Δημήτρης", "dimitris"), Name("Κατερίνα", "katerina"), Name("Γιάννης", "giannis"),
                Name("Σοφία", "sofia"), Name("Κώστας", "kostas"), Name("Αναστασία", "anastasia"),
                Name("Αλέξανδρος", "alexandros"), Name("Δέσποινα", "despoina"),
            ],
            surnames: [
                Name("Γεωργίου", "georgiou"), Name("Οικονόμου", "oikonomou"), Name("Νικολάου", "nikolaou"),
                Name("Ιωάννου", "ioannou"), Name("Βασιλείου", "vasileiou"), Name("Αντωνίου", "antoniou"),
                Name("Κωνσταντίνου", "konstantinou"), Name("Δημητρίου", "dimitriou"),
                Name("Παπανικολάου", "papanikolaou"), Name("Χριστοδούλου", "christodoulou"),
                Name("Αλεξίου", "alexiou"),
            ],
            surnameFirst: false, languages: ["el-GR"], phonePrefix: "+30 210 555 ",
            offices: ["Athens", "Thessaloniki"],
            jobs: ["Μηχανικός λογισμικού", "Λογιστής", "Υπεύθυνος πωλήσεων", "Σχεδιάστρια"],
            weight: 15),
        Culture(
            given: [
                Name("伟", "wei"), Name("芳", "fang"), Name("娜", "na"), Name("敏", "min"), Name("静", "jing"),
                Name("丽", "li"), Name("强", "qiang"), Name("磊", "lei"), Name("军", "jun"), Name("洋", "yang"),
                Name("勇", "yong"), Name("艳", "yan"), Name("杰", "jie"), Name("涛", "tao"), Name("明", "ming"),
                Name("秀英", "xiuying"), Name("晓明", "xiaoming"), Name("志强", "zhiqiang"),
            ],
            surnames: [
                Name("王", "wang"), Name("李", "li"), Name("张", "zhang"), Name("刘", "liu"), Name("陈", "chen"),
                Name("杨", "yang"), Name("黄", "huang"), Name("赵", "zhao"), Name("吴", "wu"), Name("周", "zhou"),
                Name("徐", "xu"), Name("孙", "sun"), Name("马", "ma"), Name("朱", "zhu"), Name("林", "lin"),
            ],
            surnameFirst: true, languages: ["zh-CN", "zh-TW"], phonePrefix: "+86 10 5555 ",
            offices: ["Shanghai", "Beijing", "Taipei"],
            jobs: ["软件工程师", "产品经理", "销售代表", "会计"],
            weight: 20),
    ]

    /// Contoso's users: the fixed ones, then generated people up to `count` in all.
    static func contosoUsers(count: Int, seed: String) -> [DirectoryUser] {
        var users = contosoFixedUsers
        guard count > users.count else { return users }
        users.reserveCapacity(count)
        var random = SeededGenerator(seed: seed)
        var taken = Set(users.map { $0.userPrincipalName.split(separator: "@")[0].lowercased() })
        var nextSuffix: [String: Int] = [:]
        let totalWeight = cultures.reduce(0) { $0 + $1.weight }

        for _ in users.count..<count {
            var pick = Int(random.next() % UInt64(totalWeight))
            let culture =
                cultures.first {
                    pick -= $0.weight
                    return pick < 0
                } ?? cultures[0]
            let given = culture.given[Int(random.next() % UInt64(culture.given.count))]
            let surname = culture.surnames[Int(random.next() % UInt64(culture.surnames.count))]
            let displayName = culture.surnameFirst ? surname.native + given.native : given.native + " " + surname.native

            let base = culture.surnameFirst ? "\(surname.ascii).\(given.ascii)" : "\(given.ascii).\(surname.ascii)"
            // The first free of base, base2, base3, …, resuming where this base's last search
            // stopped (no generated base ends in a digit, so no other base takes these).
            var suffix = nextSuffix[base, default: 1]
            var alias = suffix == 1 ? base : base + String(suffix)
            while !taken.insert(alias).inserted {
                suffix += 1
                alias = base + String(suffix)
            }
            nextSuffix[base] = suffix + 1

            let roll = random.next() % 100
            let phoneCount = roll < 20 ? 0 : roll < 85 ? 1 : Int(2 + random.next() % 2)
            let phones = (0..<phoneCount).map { _ in culture.phonePrefix + String(random.next() % 10_000).leftPadded(to: 4) }
            let hasMail = random.next() % 100 >= 15
            let hasMobile = random.next() % 100 < 60

            users.append(
                DirectoryUser(
                    id: random.guid(), userPrincipalName: alias + "@contoso.onmicrosoft.com", displayName: displayName,
                    givenName: given.native, surname: surname.native, mail: hasMail ? alias + "@contoso.com" : nil,
                    businessPhones: phones,
                    mobilePhone: hasMobile ? culture.phonePrefix + String(random.next() % 10_000).leftPadded(to: 4) : nil,
                    jobTitle: culture.jobs[Int(random.next() % UInt64(culture.jobs.count))],
                    officeLocation: culture.offices[Int(random.next() % UInt64(culture.offices.count))],
                    preferredLanguage: culture.languages[Int(random.next() % UInt64(culture.languages.count))],
                    password: password))
        }
        return users
    }
}
