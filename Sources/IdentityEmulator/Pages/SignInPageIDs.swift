/// The element ids and form field names of Microsoft's, Azure AD B2C's and AD FS's sign-in pages:
/// what the emulator's pages (`Pages/`) write and its controllers read, and what every Swift test
/// that fills a page looks for, defined once here. Microsoft's own, so automation written against
/// the real pages works on these. (The Python end-to-end helpers spell the same ids in
/// `sesame_e2e.py`: they are the outside world's view, and would catch a change here.)
public enum SignInPageIDs {
    /// The user name field (`loginfmt`).
    public static let userName = "i0116"
    /// The password field (`passwd`).
    public static let password = "i0118"
    /// The primary button ("Next", "Sign in", "Yes", "Accept").
    public static let primaryButton = "idSIButton9"
    /// The secondary button ("Back", "No", "Cancel").
    public static let secondaryButton = "idBtn_Back"
    /// The SMS code field (`otc`).
    public static let smsCode = "idTxtBx_SAOTCC_OTC"
    /// The SMS page's "Verify".
    public static let smsContinue = "idSubmit_SAOTCC_Continue"
    /// "Sign in another way" on every second-factor page.
    public static let signInAnotherWay = "signInAnotherWay"
    /// "Verify your identity": the list of methods (each row's `data-value` is its `authMethodId`).
    public static let proofList = "idDiv_SAOTCS_Proofs"
    /// "Approve sign in request": the number to enter in Microsoft Authenticator.
    public static let displaySign = "idRichContext_DisplaySign"
    /// "Enter Temporary Access Pass": the pass, and its inline error.
    public static let accessPass = "accessPass"
    public static let accessPassError = "accessPassError"
    /// "Keep your account secure": the activation code and URL shown under "Can't scan image?".
    public static let activationCode = "activationCode"
    public static let activationURL = "activationUrl"
    /// "Keep your account secure": the QR code.
    public static let qrCode = "qrCode"
    /// "Stay signed in?" — its "Don't show this again" box.
    public static let staySignedIn = "KmsiCheckboxField"
    /// The consent page's list of permissions.
    public static let permissionList = "permissionList"
    /// The inline error under the password.
    public static let passwordError = "passwordError"
    /// Demo mode's line that shows the code a user was sent.
    public static let demoCode = "demoCode"
    /// The device code flow's "Enter code" field (`otc`, as on microsoft.com/devicelogin).
    public static let deviceCode = "otc"
    /// The device code flow's inline error under the code.
    public static let deviceCodeError = "otcError"
    /// A refusal page's "Troubleshooting details" (error code, request and correlation ids, time).
    public static let troubleshootingDetails = "troubleshootingDetails"
    /// "Update your password": the current, new and confirmed passwords.
    public static let currentPassword = "currentPassword"
    public static let newPassword = "newPassword"
    public static let confirmPassword = "confirmNewPassword"
    /// "Keep your account secure": the phone number, and its inline error.
    public static let phoneNumber = "phoneNumber"
    public static let phoneError = "phoneError"
    /// "Approval required": the user's justification.
    public static let justification = "justification"

    /// B2C: the e-mail field of the combined sign-in page.
    public static let b2cSignInName = "signInName"
    /// B2C: the password field.
    public static let b2cPassword = "password"
    /// B2C: "Sign in".
    public static let b2cNext = "next"
    /// B2C: "Forgot your password?".
    public static let b2cForgotPassword = "forgotPassword"
    /// B2C: "Sign up now".
    public static let b2cCreateAccount = "createAccount"

    /// AD FS (a federated domain's identity provider): the sign-in form.
    public static let adfsLoginForm = "loginForm"
    /// AD FS: the user name field (`UserName`).
    public static let adfsUserName = "userNameInput"
    /// AD FS: the password field (`Password`).
    public static let adfsPassword = "passwordInput"
    /// AD FS: "Sign in".
    public static let adfsSubmit = "submitButton"
    /// AD FS: the error under the title ("Incorrect user ID or password. …").
    public static let adfsError = "errorText"
    /// AD FS: the auto-submitting form (its `name`) that posts the signed answer to Entra.
    public static let adfsHiddenForm = "hiddenform"

    /// The form field names the pages post (`FORM_FIELD=value`).
    public enum Fields {
        /// The user name (`#i0116`).
        public static let userName = "loginfmt"
        /// The password (`#i0118`).
        public static let password = "passwd"
        /// The SMS code (`#idTxtBx_SAOTCC_OTC`).
        public static let smsCode = "otc"
        /// The device code flow's user code (`#otc`).
        public static let deviceCode = "otc"
        /// B2C: the e-mail address.
        public static let b2cSignInName = "signInName"
        /// B2C: the password.
        public static let b2cPassword = "password"
        /// AD FS: the user name.
        public static let adfsUserName = "UserName"
        /// AD FS: the password.
        public static let adfsPassword = "Password"
        /// AD FS: the authentication method (`FormsAuthentication`).
        public static let adfsAuthMethod = "AuthMethod"
        /// "Update your password".
        public static let currentPassword = "oldpasswd"
        public static let newPassword = "newpasswd"
        public static let confirmPassword = "confirmnewpasswd"
        /// "Keep your account secure".
        public static let phoneNumber = "phone"
        /// "Approval required".
        public static let justification = "justification"
        /// "Verify your identity": the method chosen (`PhoneAppNotification`, `PhoneAppOTP`,
        /// `OneWaySMS`, `FidoSignIn`, `AccessPass`).
        public static let authMethodID = "authMethodId"
        /// "Enter Temporary Access Pass".
        public static let accessPass = "accesspass"
    }

    /// The password of every emulated user, which the demo notes on the pages show.
    public static let demoPassword = DirectoryGenerator.password
}
