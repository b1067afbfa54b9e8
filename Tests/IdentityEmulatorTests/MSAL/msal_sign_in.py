"""Microsoft's MSAL for Python against `identity-emulator --tls`, unchanged but for
`instance_discovery=False`: an authorization-code sign-in (PKCE, nonce, client_info), a silent
token from MSAL's cache, a refresh, and a device code sign-in (RFC 8628) whose verification page
another thread fills while MSAL polls.

The "browser" fills Microsoft's sign-in pages by their field names (loginfmt, passwd) and clicks
the primary button (idSIButton9), as automation written for login.microsoftonline.com does.

    EMULATOR_URL=https://127.0.0.1:PORT REQUESTS_CA_BUNDLE=ca.pem python msal_sign_in.py CLIENT_ID

Prints one JSON line; exits non-zero with the reason when anything is not as MSAL expects.
"""
import html.parser
import json
import os
import sys
import threading
import urllib.parse

import msal
import requests

USERNAME = "alex@contoso.onmicrosoft.com"
PASSWORD = "Passw0rd!"
REDIRECT_URI = "http://localhost:8765"


class FormReader(html.parser.HTMLParser):
    """The page's first form: action, input values, and the primary button."""

    def __init__(self):
        super().__init__()
        self.action = None
        self.fields = {}
        self.inputs = set()
        self.primary = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = a.get("action")
        elif tag == "input":
            name = a.get("name")
            if a.get("type") == "hidden" and name:
                self.fields[name] = a.get("value", "")
            elif name:
                self.inputs.add(name)
            if a.get("id") == "idSIButton9" and name:
                self.primary = (name, a.get("value", ""))
        elif tag == "button" and a.get("id") == "idSIButton9" and a.get("name"):
            self.primary = (a["name"], a.get("value", ""))


def browse(session, url):
    """Walks the sign-in pages until the service redirects to REDIRECT_URI; returns that URL."""
    response = session.get(url, allow_redirects=False)
    for _ in range(12):
        if response.status_code in (301, 302, 303):
            location = urllib.parse.urljoin(response.url, response.headers["Location"])
            if location.startswith(REDIRECT_URI):
                return location
            response = session.get(location, allow_redirects=False)
            continue
        if response.status_code != 200:
            raise SystemExit(f"sign-in page answered {response.status_code}: {response.text[:300]}")
        form = FormReader()
        form.feed(response.text)
        if form.action is None:
            raise SystemExit(f"no form on the page: {response.text[:300]}")
        fields = dict(form.fields)
        if "loginfmt" in form.inputs:
            fields["loginfmt"] = USERNAME
        if "passwd" in form.inputs:
            fields["passwd"] = PASSWORD
        if form.primary:
            fields[form.primary[0]] = form.primary[1]
        response = session.post(urllib.parse.urljoin(response.url, form.action), data=fields, allow_redirects=False)
    raise SystemExit("the sign-in pages never redirected back")


def verify_device(session, flow):
    """The person at another computer: opens verification_uri, types user_code into `otc`,
    continues, signs in. Returns the last page's text (it says the device is signed in)."""
    response = session.get(flow["verification_uri"], allow_redirects=False)
    for _ in range(12):
        if response.status_code != 200:
            raise SystemExit(f"verification page answered {response.status_code}: {response.text[:300]}")
        form = FormReader()
        form.feed(response.text)
        if form.action is None:
            return response.text
        fields = dict(form.fields)
        if "otc" in form.inputs:
            fields["otc"] = flow["user_code"]
        if "loginfmt" in form.inputs:
            fields["loginfmt"] = USERNAME
        if "passwd" in form.inputs:
            fields["passwd"] = PASSWORD
        if form.primary:
            fields[form.primary[0]] = form.primary[1]
        response = session.post(urllib.parse.urljoin(response.url, form.action), data=fields, allow_redirects=False)
    raise SystemExit("the verification pages never finished")


def device_code(client_id, base):
    """initiate_device_flow, a person at the verification page, acquire_token_by_device_flow."""
    app = msal.PublicClientApplication(client_id, authority=f"{base}/contoso.onmicrosoft.com", instance_discovery=False)
    flow = app.initiate_device_flow(scopes=["User.Read"])
    if "user_code" not in flow:
        raise SystemExit(f"initiate_device_flow failed: {flow.get('error')}: {flow.get('error_description')}")
    if flow["verification_uri"] not in flow["message"] or flow["user_code"] not in flow["message"]:
        raise SystemExit(f"the device code message names neither page nor code: {flow['message']}")
    pages = {}
    person = threading.Thread(target=lambda: pages.setdefault("last", verify_device(requests.Session(), flow)))
    person.start()
    result = app.acquire_token_by_device_flow(flow)
    person.join()
    if "access_token" not in result:
        raise SystemExit(f"device code sign-in failed: {result.get('error')}: {result.get('error_description')}")
    if "You have signed in to the" not in pages.get("last", ""):
        raise SystemExit("the verification page did not say the device is signed in")
    return result["id_token_claims"].get("preferred_username")


def main():
    client_id = sys.argv[1]
    base = os.environ["EMULATOR_URL"]
    # A single-tenant app (Entra's default): the tenant's own authority, as for a real registration.
    app = msal.PublicClientApplication(client_id, authority=f"{base}/contoso.onmicrosoft.com", instance_discovery=False)

    flow = app.initiate_auth_code_flow(["User.Read"], redirect_uri=REDIRECT_URI)
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(flow["auth_uri"]).query)
    for parameter in ("code_challenge", "nonce", "state", "client_info"):
        if parameter not in query:
            raise SystemExit(f"MSAL's authorize request has no {parameter}")

    location = browse(requests.Session(), flow["auth_uri"])
    auth_response = {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(location).query).items()}
    result = app.acquire_token_by_auth_code_flow(flow, auth_response)
    if "access_token" not in result:
        raise SystemExit(f"code redemption failed: {result.get('error')}: {result.get('error_description')}")
    claims = result["id_token_claims"]
    if claims.get("preferred_username") != USERNAME:
        raise SystemExit(f"id_token is for {claims.get('preferred_username')}")

    accounts = app.get_accounts()
    if len(accounts) != 1:
        raise SystemExit(f"MSAL's cache has {len(accounts)} accounts")
    account = accounts[0]
    expected_home = f"{claims['oid']}.{claims['tid']}"
    if account["home_account_id"] != expected_home:
        raise SystemExit(f"home_account_id {account['home_account_id']} != {expected_home} (client_info)")

    silent = app.acquire_token_silent(["User.Read"], account=account)
    if not silent or silent.get("access_token") != result["access_token"]:
        raise SystemExit("the silent call did not return the cached access token")
    source = silent.get("token_source", "cache")

    rt_before = [rt["secret"] for rt in app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)]
    refreshed = app.acquire_token_silent(["User.Read"], account=account, force_refresh=True)
    if not refreshed or "access_token" not in refreshed:
        raise SystemExit(f"refresh failed: {refreshed}")
    if refreshed["access_token"] == result["access_token"]:
        raise SystemExit("the refresh returned the old access token")
    rts = [rt["secret"] for rt in app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)]
    if len(rts) != 1:
        raise SystemExit(f"{len(rts)} refresh tokens in the cache")
    if rts == rt_before:
        raise SystemExit("the refresh token was not rotated")

    me = requests.get(f"{base}/v1.0/me", headers={"Authorization": f"Bearer {refreshed['access_token']}"})
    device_user = device_code(client_id, base)
    print(json.dumps({
        "msal": msal.__version__,
        "signed_in": claims["preferred_username"],
        "home_account_id": account["home_account_id"],
        "silent_source": source,
        "refreshed_source": refreshed.get("token_source", "identity_provider"),
        "me_status": me.status_code,
        "me": me.json().get("displayName"),
        "device_code_signed_in": device_user,
    }))


if __name__ == "__main__":
    main()
