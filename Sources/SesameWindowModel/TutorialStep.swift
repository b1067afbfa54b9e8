import FoundationEssentials
import SesameService

/// Where a step of the flow is in the tutorial the sample comes from (MISSION: the seeds), by the
/// tutorial's own step names, so that a reader of the tutorial finds their place in the live flow.
enum TutorialStep {
    /// The three tutorials, by the sample that is each one's Linux form.
    enum Tutorial: String {
        /// "Add sign-in to an iOS app using a third-party library (NXOAuth2) with Graph API, v2.0 endpoint".
        case directory
        /// "Azure AD B2C: call a web API from an iOS app using a third-party library".
        case tasks
        /// "Use MSAL to get a token for Microsoft Graph".
        case me

        var title: String {
            switch self {
            case .directory: L("the NXOAuth2 and Graph tutorial")
            case .tasks: L("the Azure AD B2C task list tutorial")
            case .me: L("the MSAL tutorial")
            }
        }
    }

    /// The tutorial a step's event reveals: the sample that signs in or calls, its API, B2C's policy.
    static func tutorial(revealedBy event: FlowTrace.Event) -> Tutorial? {
        func field(_ name: String) -> String? { event.fields.first { $0.0 == name }?.1 }
        if let sample = field("sample") { return Tutorial(rawValue: sample) }
        guard let url = field("url").flatMap(URLComponents.init(string:)) else { return nil }
        if event.name == "navigation", url.queryItems?.contains(where: { $0.name == "p" }) == true { return .tasks }
        guard event.name == "api-call" else { return nil }
        if url.path.hasSuffix("/me") { return .me }
        if url.path.contains("/users") { return .directory }
        if url.path.contains("/api/tasks") { return .tasks }
        return nil
    }

    /// "Tutorial: … — …": the tutorial's step for `event`, in the sample's tutorial.
    static func line(for event: FlowTrace.Event, in tutorial: Tutorial?) -> String? {
        guard let tutorial, let step = step(of: event, in: tutorial) else { return nil }
        return String(formatting: L("In %1$@: “%2$@”"), tutorial.title, step)
    }

    /// The tutorial's own heading for what the step does (the seeds' section titles).
    static func step(of event: FlowTrace.Event, in tutorial: Tutorial) -> String? {
        let kind = event.fields.first { $0.0 == "kind" }?.1
        switch (event.name, tutorial) {
        case ("sign-in-started", .me),
            ("navigation", .me) where kind != "redirect":
            return L("Use the Microsoft Authentication Library (MSAL) to get a token for the Microsoft Graph API")
        case ("navigation", .me), ("redirect-intercepted", .me): return L("Register the callback")
        case ("token-request", .me), ("token-silent", .me), ("token-acquired", .me):
            return L("Use the Microsoft Authentication Library (MSAL) to get a token for the Microsoft Graph API")
        case ("api-call", .me): return L("Call the Microsoft Graph API using the token you just obtained")
        case ("signed-out", .me): return L("Set up sign-out")
        case ("window-shown", .directory), ("window-shown", .tasks): return L("Add a check to see if you’re logged in")
        case ("sign-in-started", .directory), ("sign-in-started", .tasks): return L("Create a WebView for sign-in")
        // The web view loads the prepared authorization URL: where the tutorial creates it.
        case ("navigation", .directory) where kind == "authorize", ("navigation", .tasks) where kind == "authorize":
            return L("Create a WebView for sign-in")
        case ("navigation", .directory), ("navigation", .tasks), ("page-loaded", .directory), ("page-loaded", .tasks):
            return L("Override the WebView methods to handle authentication")
        case ("redirect-intercepted", .directory), ("redirect-intercepted", .tasks), ("token-request", .directory),
            ("token-request", .tasks):
            return L("Write code to handle the result of the OAuth2 request")
        case ("token-acquired", .directory), ("token-acquired", .tasks):
            return L("Set up the OAuth context (called account store)")
        case ("api-call", .directory): return L("Provide a way to call the Graph API when someone types in the search field")
        case ("api-call", .tasks): return L("Create the GraphAPICaller class to handle requests to the REST API")
        case ("list-rendered", .directory), ("list-rendered", .tasks): return L("Update the table view when data is received")
        default: return nil
        }
    }
}
