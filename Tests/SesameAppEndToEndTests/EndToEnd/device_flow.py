"""This computer registered from the window, as a person does it, and what that changes.

    python device_flow.py SESAME_BINARY EMULATOR_URL SCRATCH_DIR

gnome-keyring runs on the session bus SESAME_E2E_APP_BUS names (a bus of the test's own), and
Sesame keeps its sign-ins there. The organization asks for a registered device for the samples'
apps (an administrator consented to the Directory's for everyone). Alex signs in to the Directory
and is refused; the refusal offers "Register This Computer…"; the question is answered, the name
typed, and alex signs in on the registration's page (the Microsoft Authentication Broker's). Then
the Directory signs in with no page, the Me console's page (its app needs alex's consent) asks
only for the consent, a program's `sesame token` carries the device, and "Remove This Computer’s
Registration…" removes it here and in the organization; registered and removed again at a
terminal while the window is open, the window's account menu says so as it opens. Prints one
JSON object: what was seen. DeviceEndToEndTests.swift says what must hold.
"""
import base64
import json
import os
import re
import subprocess
import sys
import urllib.request

import requests

from broker_e2e import AppBus
from sesame_e2e import PASSWORD, Sesame, StepFailed, isolate_app_environment, typed_at_terminal, wait

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "IdentityEmulatorTests", "MSAL"))
from msal_sign_in import verify_device  # noqa: E402

binary, emulator, scratch = sys.argv[1:4]
data = os.path.join(scratch, "data")
isolate_app_environment(data)
bus = AppBus(os.environ["SESAME_E2E_APP_BUS"])
bus.start_keyring(os.path.join(scratch, "home"), os.path.join(scratch, "keyring.log"))
os.makedirs(os.path.join(data, "sesame"), exist_ok=True)
with open(os.path.join(data, "sesame", "storage"), "w") as marker:
    marker.write("secret-service\n")
ALEX = "alex@contoso.onmicrosoft.com"
DIRECTORY, ME = "6731de76-14a6-49ae-97bc-6eba6914391e", "66855f8a-60cd-445e-a9bb-8cd8eadbd3fa"
seen = {}


def control(path, body=b""):
    """The emulator's control endpoint: what an administrator does in the Entra admin center."""
    request = urllib.request.Request(f"{emulator.rstrip('/')}/.emulator/{path}", data=body, method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def typed(arguments):
    """`sesame ARGUMENTS` typed by alex at a terminal: what it printed, and its exit status."""
    status, shown = typed_at_terminal(f"{binary} {arguments} --emulator={emulator}; echo status=$?", dict(os.environ))
    return shown, int(shown.rsplit("status=", 1)[-1].split()[0]) if "status=" in shown else -1


def menu_device(app):
    """What the account menu says of this computer (read while the menu is closed)."""
    labels = app.ui.all("label", "This computer’s registration", showing=False)
    return app.ui.text(labels[0]) if labels else None


def menu_device_when_opened(app, expected):
    """What the account menu says of this computer once it was opened and closed again: waits
    for `expected`, and gives what it said when that never came."""
    app.ui.click("Account", role="toggle button")
    app.ui.click("Account", role="toggle button")
    try:
        wait(f"the account menu to say {expected!r}", lambda: menu_device(app) == expected)
    except StepFailed:
        pass
    return menu_device(app)


def register_at_terminal():
    """`sesame device register` typed by alex while the window is open, the code entered on another device."""
    register = subprocess.Popen([binary, "device", "register", "--yes", "--name", "alex-laptop", f"--emulator={emulator}"],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ))
    told = ""
    while (found := re.search(r"open the page (\S+) and enter the code ([A-Z0-9]{9})", told)) is None:
        line = register.stderr.readline()
        if not line:
            break
        told += line
    if found:
        verify_device(requests.Session(), {"verification_uri": found.group(1), "user_code": found.group(2)})
    out, _ = register.communicate(timeout=120)
    # What it printed on stdout only: stderr named the one-time code.
    return register.returncode, out


def screenshot(name):
    """The whole screen (the window and its dialog), as SCRATCH_DIR/NAME.png."""
    import gi
    gi.require_version("Gdk", "3.0")
    from gi.repository import Gdk
    Gdk.init([])
    root = Gdk.get_default_root_window()
    shot = Gdk.pixbuf_get_from_window(root, 0, 0, root.get_width(), root.get_height())
    shot.savev(os.path.join(scratch, f"{name}.png"), "png", [], [])


control(f"clients/{DIRECTORY}/adminConsent")
policy = {"tenants": {"contoso.onmicrosoft.com": {"conditionalAccess": [
    {"name": "Known computers only", "apps": [DIRECTORY, ME], "require": "registeredDevice"}]}}}
control("policy", json.dumps(policy).encode())

app = Sesame(binary, emulator, os.path.join(scratch, "trace-1.jsonl"), "directory")
try:
    # 1. Refused: the organization asks for a registered device, and the window offers to register.
    app.page_with("i0116", "the user name page")
    app.fill("i0116", ALEX)
    app.submit("idSIButton9")
    app.page_with("i0118", "the password page")
    app.fill("i0118", PASSWORD)
    app.submit("idSIButton9")
    seen["refused"] = app.trace.wait_for("refusal-page").get("code")
    app.ui.click("Register this computer with your organization")
    seen["question"] = app.ui.text(app.ui.find("label", "Question about this computer"))
    seen["question_text"] = app.ui.text(app.ui.find("label", "What it means"))
    seen["name_offered"] = app.ui.text(app.ui.find("text", "Name of this computer"))
    screenshot("device-question")
    app.ui.type("Name of this computer", "alex-laptop")
    app.ui.click("Register this computer")

    # 2. The registration's sign-in, on the window's own sign-in page: the broker's app.
    app.page_with("i0116", "the registration's user name page")
    seen["registration_page"] = app.driver.current_url
    registration = {}
    app.sign_in_entra(ALEX, seen=registration)
    registered = app.trace.wait_for("device-registered")
    seen["device_id"] = registered.get("deviceId")
    seen["outcome"] = app.ui.text(app.ui.find("label", "Question about this computer"))
    seen["outcome_text"] = app.ui.text(app.ui.find("label", "What it means"))
    screenshot("device-registered")

    # 3. The Directory (an app the administrator consented to) goes on signing in, with no page at all.
    mark = app.trace.mark()
    app.ui.click("Close this message")
    app.ui.find("table", "People")
    seen["directory_device_sign_in"] = [event.get("accountType") for event in app.trace.find("device-sign-in", since=mark)]
    seen["directory_pages"] = len(app.trace.find("sign-in-page-requested", since=mark))

    # 4. The Me console's app needs alex's own consent, which the PRT is not: its page shows,
    #    sent with the device's credential, so the service asks no name and no password.
    mark = app.trace.mark()
    app.ui.click("Me", role="radio button")
    app.ui.click("Call Microsoft Graph")
    seen["me_first_page"] = app.next_page({"user name": "i0116", "password": "i0118", "consent": "permissionList"},
                                          "the Me console's first sign-in page")
    seen["me_credential_sent"] = len(app.trace.find("device-credential-sent", since=mark))
    app.answer_consent(seen)
    wait("/me to answer 200 in the log", lambda: "→ 200" in app.ui.text(app.ui.find("text", "Log")))
    seen["menu_device"] = menu_device(app)

    # A program's tokens (typed at a terminal, through the window's account service) name the device.
    for account_type in ("myGraphService", "msalGraph"):
        shown, status = typed(f"token --account-type {account_type}")
        found = re.search(r"eyJ[\w-]+\.[\w-]+\.[\w-]*", shown)
        token = found.group(0) if found else ""
        seen[f"token_{account_type}"] = {"status": status, "device": claims(token).get("deviceid") if token else None}

    # 5. Removed from the menu: here and in the organization.
    app.ui.from_menu("Account", "Remove This Computer’s Registration…")
    seen["remove_question"] = app.ui.text(app.ui.find("label", "Question about this computer"))
    app.ui.click("Remove this computer’s registration")
    app.trace.wait_for("device-removed")
    seen["menu_after_removal"] = menu_device(app)

    # 6. Registered and removed at a terminal while the window is open: its menu says so as it opens.
    seen["terminal_register"], seen["terminal_register_output"] = register_at_terminal()
    seen["menu_after_terminal_register"] = menu_device_when_opened(
        app, f"This computer is registered with your organization by {ALEX}.")
    shown, seen["terminal_remove"] = typed("device remove")
    seen["menu_after_terminal_removal"] = menu_device_when_opened(app, "This computer is not registered with your organization.")
except StepFailed:
    app.report_where_it_stood(scratch)
    raise
finally:
    app.quit()

shown, status = typed("device status")
seen["status_after_removal"] = shown
with open(os.path.join(scratch, "trace-1.jsonl"), encoding="utf-8") as trace:
    seen["trace"] = trace.read()
print(json.dumps(seen))
