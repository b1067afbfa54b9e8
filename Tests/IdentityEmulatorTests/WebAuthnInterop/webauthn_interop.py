"""A passkey registered and used through the identity emulator's pages over HTTPS by clients
nobody here wrote: soft-webauthn plays the authenticator (with user verification set, as a
passkey with a PIN or biometric does), urllib the browser; Duo's webauthn verifies the same
registration and assertions independently. Then the attacks, each at the pages: a replayed
answer, a forged signature, another origin, another rpId, a cloned key (counter rollback).

Usage: webauthn_interop.py BASE CA_FILE USER PASSWORD AUTHORIZE_PATH CODE_VERIFIER
Prints one JSON object: what each step saw (the Swift test checks it).
"""
import html
import json
import re
import signal
import socket
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
from base64 import urlsafe_b64decode, urlsafe_b64encode
from http.cookiejar import CookieJar
from struct import pack

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.utils import sha256
from soft_webauthn import SoftWebauthnDevice
import webauthn
from webauthn.helpers import parse_authentication_credential_json, parse_registration_credential_json


def b64d(text):
    return urlsafe_b64decode(text + "=" * (-len(text) % 4))


def b64e(data):
    return urlsafe_b64encode(data).decode().rstrip("=")


class Authenticator(SoftWebauthnDevice):
    """soft-webauthn with UV set; `get` answers for any origin and rpId it is told (an attacker's page)."""

    def create(self, options, origin):
        answer = super().create({"publicKey": dict(options["publicKey"], attestation="none")}, origin)
        attestation = cbor.decode(answer["response"]["attestationObject"])
        data = bytearray(attestation["authData"])
        data[32] |= 0x04
        attestation["authData"] = bytes(data)
        answer["response"]["attestationObject"] = cbor.encode(attestation)
        return answer

    def get(self, options, origin, rp_id=None, forge=False, counter=None):
        self.sign_count = counter if counter is not None else self.sign_count + 1
        client_data = json.dumps({"type": "webauthn.get", "challenge": b64e(options["publicKey"]["challenge"]), "origin": origin}).encode()
        data = sha256((rp_id or self.rp_id).encode()) + b"\x05" + pack(">I", self.sign_count)
        signature = self.private_key.sign(data + sha256(client_data), ec.ECDSA(hashes.SHA256()))
        if forge:
            signature = signature[:-1] + bytes([signature[-1] ^ 1])
        return {"id": b64e(self.credential_id), "rawId": b64e(self.credential_id), "type": "public-key", "clientExtensionResults": {},
                "response": {"clientDataJSON": b64e(client_data), "authenticatorData": b64e(data), "signature": b64e(signature),
                             "userHandle": b64e(self.user_handle)}}


class Browser:
    """Cookies, forms and redirects on the emulator's host; a redirect elsewhere (the app's) ends a request."""

    class Left(Exception):
        def __init__(self, location):
            self.location = location

    def __init__(self, base, ca_file):
        self.base = base
        host = urllib.parse.urlsplit(base).netloc
        context = ssl.create_default_context(cafile=ca_file)

        class Redirects(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, req, fp, code, msg, headers, newurl):
                target = urllib.parse.urljoin(req.full_url, newurl)
                if urllib.parse.urlsplit(target).netloc != host:
                    raise Browser.Left(target)
                return super().redirect_request(req, fp, code, msg, headers, newurl)

        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(CookieJar()), urllib.request.HTTPSHandler(context=context), Redirects())
        self.page = ""
        self.url = base

    def open(self, path, form=None, body=None, content_type=None):
        data = urllib.parse.urlencode(form).encode() if form is not None else body
        request = urllib.request.Request(urllib.parse.urljoin(self.base, path), data=data)
        if content_type:
            request.add_header("Content-Type", content_type)
        try:
            with self.opener.open(request) as answer:
                self.url, self.page = answer.geturl(), answer.read().decode()
                return answer.status, self.page
        except urllib.error.HTTPError as error:
            self.page = error.read().decode()
            return error.code, self.page

    def hidden(self, name):
        found = re.search(r'name="%s" value="([^"]*)"' % re.escape(name), self.page)
        return html.unescape(found.group(1)) if found else None

    def action(self):
        return html.unescape(re.search(r'<form method="post" action="([^"]*)"', self.page).group(1))

    def post(self, fields):
        return self.open(self.action(), form=fields)

    def options(self):
        return json.loads(html.unescape(re.search(r'data-options="([^"]*)"', self.page).group(1)))


def sign_in_with_password_and_code(browser, user, password, start):
    browser.open(start)
    ctx = browser.hidden("ctx")
    browser.post([("ctx", ctx), ("step", "username"), ("loginfmt", user)])
    browser.post([("ctx", ctx), ("step", "password"), ("passwd", password)])
    code = re.search(r'id="demoCode">[^<]*<code>(\d+)</code>', browser.page)
    if code:
        browser.post([("ctx", ctx), ("step", "otc"), ("otc", code.group(1))])
    return ctx


def main():
    # Never a hang: every request gives up after 30 s, the whole run after 4 minutes.
    socket.setdefaulttimeout(30)
    signal.alarm(240)
    base, ca_file, user, password, authorize, verifier = sys.argv[1:7]
    origin = base.rstrip("/")
    rp_id = urllib.parse.urlsplit(base).hostname
    seen = {}

    # Registration in Security info, after a sign-in with MFA (the demo page shows the texted code).
    browser = Browser(base, ca_file)
    ctx = sign_in_with_password_and_code(browser, user, password, "/security-info")
    if "Stay signed in?" in browser.page:
        browser.post([("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
    token = browser.hidden("token")
    seen["securityInfo"] = token is not None
    status, text = browser.open("/security-info/passkey/options", form=[("token", token or "")])
    options = json.loads(text)
    seen["creationOptions"] = {"status": status, "rp": options.get("rp"), "attestation": options.get("attestation"),
                               "userVerification": options.get("authenticatorSelection", {}).get("userVerification"),
                               "algorithms": [p["alg"] for p in options.get("pubKeyCredParams", [])]}
    device = Authenticator()
    public_key = dict(options, challenge=b64d(options["challenge"]), user=dict(options["user"], id=b64d(options["user"]["id"])))
    created = device.create({"publicKey": public_key}, origin)
    credential = {"id": b64e(created["rawId"]), "rawId": b64e(created["rawId"]), "type": "public-key", "clientExtensionResults": {},
                  "response": {"clientDataJSON": b64e(created["response"]["clientDataJSON"]),
                               "attestationObject": b64e(created["response"]["attestationObject"]), "transports": ["usb"]}}
    status, text = browser.open("/security-info/passkey", body=json.dumps({"token": token, "name": "soft-webauthn", "credential": credential}).encode(),
                                content_type="application/json")
    seen["registration"] = {"status": status, "answer": json.loads(text)}
    duo = webauthn.verify_registration_response(
        credential=parse_registration_credential_json(json.dumps(credential)), expected_challenge=b64d(options["challenge"]),
        expected_origin=origin, expected_rp_id=rp_id, require_user_verification=True)
    seen["duoRegistration"] = {"credentialId": b64e(duo.credential_id), "sameKey": duo.credential_id == created["rawId"]}
    duo_key, duo_count = duo.credential_public_key, duo.sign_count

    def passkey_page(browser):
        """A sign-in without a user name: Sign-in options → the tile → the passkey page."""
        browser.open(authorize)
        ctx = browser.hidden("ctx")
        browser.post([("ctx", ctx), ("step", "username"), ("action", "sign-in-options")])
        browser.post([("ctx", ctx), ("step", "fido"), ("action", "start")])
        return ctx

    def answer(browser, ctx, credential):
        try:
            browser.post([("ctx", ctx), ("step", "fido"), ("credential", json.dumps(credential))])
        except Browser.Left as left:
            return left.location
        return None

    def error_line(page):
        found = re.search(r'id="fidoError"[^>]*>([^<]*)<', page)
        return html.unescape(found.group(1)) if found else None

    # The sign-in: the passkey names the user; Duo verifies the same assertion.
    browser = Browser(base, ca_file)
    ctx = passkey_page(browser)
    request = browser.options()
    seen["requestOptions"] = {"rpId": request["rpId"], "allowCredentials": request["allowCredentials"],
                              "userVerification": request["userVerification"]}
    good = device.get({"publicKey": {"challenge": b64d(request["challenge"])}}, origin)
    answer(browser, ctx, good)
    seen["signIn"] = {"staySignedIn": "Stay signed in?" in browser.page, "user": user in browser.page}
    verified = webauthn.verify_authentication_response(
        credential=parse_authentication_credential_json(json.dumps(good)), expected_challenge=b64d(request["challenge"]),
        expected_origin=origin, expected_rp_id=rp_id, credential_public_key=duo_key, credential_current_sign_count=duo_count,
        require_user_verification=True)
    seen["duoAssertion"] = {"newSignCount": verified.new_sign_count}
    location = None
    try:
        browser.post([("ctx", ctx), ("step", "kmsi"), ("kmsi", "yes")])
        if 'name="consent"' in browser.page or "Permissions requested" in browser.page:
            browser.post([("ctx", ctx), ("step", "consent"), ("consent", "accept")])
    except Browser.Left as left:
        location = left.location
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location or "").query)).get("code")
    seen["code"] = code is not None
    if code:
        query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(authorize).query))
        tenant = urllib.parse.urlsplit(authorize).path.split("/")[1]
        status, text = browser.open("/%s/oauth2/v2.0/token" % tenant, form=[
            ("client_id", query["client_id"]), ("grant_type", "authorization_code"), ("code", code),
            ("redirect_uri", query["redirect_uri"]), ("code_verifier", verifier)])
        tokens = json.loads(text)
        for name in ("id_token", "access_token"):
            claims = json.loads(b64d(tokens.get(name, "..").split(".")[1]) or b"{}")
            seen.setdefault("amr", claims.get("amr"))
            seen["amr"] = seen["amr"] or claims.get("amr")

    # The attacks, each on a fresh passkey page.
    attacks = {
        "replay": lambda request: good,
        "forged": lambda request: device.get({"publicKey": {"challenge": b64d(request["challenge"])}}, origin, forge=True),
        "wrongOrigin": lambda request: device.get({"publicKey": {"challenge": b64d(request["challenge"])}}, "https://evil.example"),
        "wrongRpId": lambda request: device.get({"publicKey": {"challenge": b64d(request["challenge"])}}, origin, rp_id="evil.example"),
        "counterRollback": lambda request: device.get({"publicKey": {"challenge": b64d(request["challenge"])}}, origin, counter=1),
    }
    seen["attacks"] = {}
    for name, make in attacks.items():
        browser = Browser(base, ca_file)
        ctx = passkey_page(browser)
        left = answer(browser, ctx, make(browser.options()))
        seen["attacks"][name] = {"advanced": left is not None or "Stay signed in?" in browser.page, "error": error_line(browser.page)}
    print(json.dumps(seen))


main()
