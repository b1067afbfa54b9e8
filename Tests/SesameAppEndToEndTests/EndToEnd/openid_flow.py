"""Any OpenID Connect provider, through the window and through `sesame token`: a provider this
project did not write (oidc-provider-mock, authlib inside) runs on a free port; a settings file
names only its discovery URL, a client id and secret; the window's OpenID console signs alice in on
the provider's own page (WebDriver types her subject and Enter) and calls its userinfo endpoint;
then `sesame token` twice. The provider's first token lives a minute, so the console's call right
after the sign-in refreshes it — with the secret in HTTP Basic (discovery names no method, so
OAuth's default), which this provider demands for refreshes — and `sesame token` then prints the
refreshed token from the store.

The flow `openid-tasks` signs in with the B2C sample's keys (a Tasks-shaped file: accountIdentifier,
clientID, clientSecret, authURL, loginURL, bhh, tokenURL, keychain, contentType, taskAPI) plus
`discoveryURL` and `scopes`, as the seeds meant their generic keys: the window's Tasks page signs
alice in at the same provider, then `sesame accounts` lists her. The provider has no task API, so
the task list itself fails; that is not what this flow is about.

    python openid_flow.py FLOW SESAME_BINARY EMULATOR_URL SCRATCH_DIR

Prints one JSON object: what the window, the provider and `sesame` showed. The app's trace is in
SCRATCH_DIR/trace-1.jsonl.
"""
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from sesame_e2e import Sesame, isolate_app_environment, wait

flow, binary, emulator, scratch = sys.argv[1:5]
isolate_app_environment(os.path.join(scratch, "data"))


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


port = free_port()
issuer = f"http://127.0.0.1:{port}"
provider_binary = os.path.join(os.path.dirname(sys.executable), "oidc-provider-mock")
provider = subprocess.Popen(
    [provider_binary, "--port", str(port), "--host", "127.0.0.1", "--require-nonce", "true", "--token-max-age", "60",
     "--user-claims", json.dumps({"sub": "alice", "email": "alice@example.com", "name": "Alice Example"})],
    stdout=subprocess.DEVNULL, stderr=open(os.path.join(scratch, "provider.log"), "w", encoding="utf-8"))


def discovery():
    try:
        with urllib.request.urlopen(f"{issuer}/.well-known/openid-configuration", timeout=2) as answer:
            return json.load(answer)
    except OSError:
        return None


PLIST_HEAD = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0"><dict>
"""


def subject_field(app):
    """The provider's sign-in page: one field for the subject (the user's id)."""
    def find():
        fields = app.driver.find_elements(By.NAME, "sub")
        return fields[0] if fields and fields[0].is_displayed() else None
    return app.wait("the provider's sign-in page (its subject field)", find)


def sesame(settings, *arguments):
    return subprocess.run([binary, *arguments, f"--settings={settings}"], capture_output=True, text=True, timeout=60)


def openid_console(seen):
    """The OpenID shape: discovery names everything; the console calls userinfo; `sesame token`."""
    settings = os.path.join(scratch, "openid.plist")
    with open(settings, "w", encoding="utf-8") as plist:
        plist.write(PLIST_HEAD + f"""  <key>accountIdentifier</key><string>openid</string>
  <key>clientID</key><string>sesame-desktop</string>
  <key>clientSecret</key><string>not-a-real-secret-4711</string>
  <key>discoveryURL</key><string>{issuer}/.well-known/openid-configuration</string>
  <key>scopes</key><string>openid profile email</string>
</dict></plist>
""")
    app = Sesame(binary, emulator, os.path.join(scratch, "trace-1.jsonl"), "openid", extra_arguments=[f"--settings={settings}"])
    try:
        # Before the first call the page is a status page whose one button is the call.
        app.ui.click("Call the userinfo endpoint")
        field = subject_field(app)
        seen["provider_page"] = app.url
        field.send_keys("alice", Keys.ENTER)
        app.trace.wait_for("token-acquired", accountType="openid")
        log = app.ui.find("text", "Log")
        wait("userinfo to answer 200 in the log", lambda: "/userinfo → 200" in app.ui.text(log))
        seen["log"] = app.ui.text(log)
    finally:
        app.quit()

    accounts = sesame(settings, "accounts")
    seen["accounts"] = accounts.stdout
    first, second = sesame(settings, "token", "--account-type", "openid"), sesame(settings, "token", "--account-type", "openid")
    seen["token_status"] = [first.returncode, second.returncode]
    seen["token_errors"] = first.stderr + second.stderr
    seen["tokens"] = [first.stdout.strip(), second.stdout.strip()]


def tasks_shaped_file(seen):
    """The B2C sample's keys plus discoveryURL, against the same provider; no emulator anywhere."""
    settings = os.path.join(scratch, "tasks-oidc.plist")
    with open(settings, "w", encoding="utf-8") as plist:
        plist.write(PLIST_HEAD + f"""  <key>accountIdentifier</key><string>tasks-oidc</string>
  <key>clientID</key><string>sesame-tasks</string>
  <key>clientSecret</key><string>not-a-real-secret-4711</string>
  <key>authURL</key><string>{issuer}/oauth2/authorize</string>
  <key>loginURL</key><string>{issuer}/login</string>
  <key>bhh</key><string>http://localhost/sesame-redirect</string>
  <key>tokenURL</key><string>{issuer}/oauth2/token</string>
  <key>keychain</key><string>sesame.e2e.tasks-oidc</string>
  <key>contentType</key><string>application/x-www-form-urlencoded</string>
  <key>taskAPI</key><string>{issuer}/tasks</string>
  <key>scopes</key><string>openid profile email</string>
  <key>discoveryURL</key><string>{issuer}/.well-known/openid-configuration</string>
</dict></plist>
""")
    # Not pointed at the emulator: every URL of this file is the provider's.
    app = Sesame(binary, None, os.path.join(scratch, "trace-1.jsonl"), "tasks", extra_arguments=[f"--settings={settings}"])
    try:
        # The Tasks page signs in when shown.
        field = subject_field(app)
        seen["provider_page"] = app.url
        field.send_keys("alice", Keys.ENTER)
        app.trace.wait_for("token-acquired", accountType="tasks-oidc")
    finally:
        app.quit()
    accounts = sesame(settings, "accounts")
    seen["accounts"] = accounts.stdout
    seen["accounts_status"] = accounts.returncode
    seen["accounts_errors"] = accounts.stderr


seen = {}
try:
    document = wait("the OpenID provider to answer", discovery, timeout=60)
    seen["provider_auth_methods"] = document.get("token_endpoint_auth_methods_supported")
    if flow == "openid-tasks":
        tasks_shaped_file(seen)
    else:
        openid_console(seen)
finally:
    provider.terminate()
    provider.wait(timeout=10)
# The provider's own access log: every token request it answered, and every discovery fetched.
with open(os.path.join(scratch, "provider.log"), encoding="utf-8") as provider_log:
    lines = provider_log.readlines()
seen["token_requests"] = [line.split('"')[-1].strip().split(" ")[0] for line in lines if "POST /oauth2/token" in line]
seen["discovery_requests"] = [line.split('"')[1] for line in lines if "openid-configuration" in line and line.count('"') >= 2]
print(json.dumps(seen))
