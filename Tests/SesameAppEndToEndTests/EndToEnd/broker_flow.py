"""Programs built on MSAL for Python sign in through Sesame as the desktop's identity broker.

    microsoft_hosts.sh ADDRESS CA -- python broker_flow.py SESAME_BINARY SCRATCH_DIR CLIENT_ID CLIENT_ID2 CLIENT_ID3 TENANT_ID [FLOW]

Run where login.microsoftonline.com is the identity emulator (microsoft_hosts.sh; REQUESTS_CA_BUNDLE
names its CA for MSAL's own requests). The app runs on the session bus SESAME_E2E_APP_BUS names,
where gnome-keyring first gets an unlocked "login" collection (broker_e2e.py, shared with `make
bench`'s broker figure, says why and how).

The programs are msal_broker_app.py (CLIENT_ID), msal_second_app.py (CLIENT_ID2) and
msal_third_app.py (CLIENT_ID again — another script of the same app, which the kernel cannot tell
from the first: both are python — then CLIENT_ID3, an app nobody decided about): MSAL,
unchanged, with `enable_broker_on_linux=True`, each run once per step as a person runs a command.
Whatever Sesame shows meanwhile — its sign-in pages (driven through WebDriver) and its question
about the program (answered through the accessibility tree) — is answered as a user would, in
whichever order it comes. Prints one JSON object: what was seen. BrokerEndToEndTests.swift says
what must hold.

FLOW `device` instead: Sesame keeps its sign-ins in the keyring, and megan registers the computer
from the window's account menu first (docs/DEVICE.md); then the first program signs in: the
question, and a sign-in page only for the consent its app needs (the device's credential goes with
it: no password, no code); a second program, whose app an administrator consented to, gets no page
at all; their tokens name the device.
"""
import json
import os
import subprocess
import sys
import time
import urllib.request

import broker_e2e
from broker_e2e import PROGRAM_TIMEOUT, BrokerDesktop, answer_meanwhile, broker_calls, told_events
from sesame_e2e import StepFailed

# Megan's sign-in asks for a one-time SMS code: multi-factor authentication through the broker.
broker_e2e.USER = "megan@contoso.onmicrosoft.com"

binary, scratch, first_client, second_client, third_client, tenant_id = sys.argv[1:7]
flow_name = sys.argv[7] if len(sys.argv) > 7 else "programs"
HERE = os.path.dirname(os.path.abspath(__file__))
seen = {}


def run_program(script, client, command, cache_of=None, tenant="organizations"):
    """Starts one of the MSAL programs (its token cache its own, under SCRATCH_DIR, or that of the
    script `cache_of` names: two scripts of one app sharing its cache) with its authority's tenant."""
    cache = os.path.join(scratch, f"msal-cache-{os.path.splitext(cache_of or script)[0]}.json")
    environment = {**os.environ, "HOME": os.path.join(scratch, "home")}
    return subprocess.Popen([sys.executable, os.path.join(HERE, script), client, cache, command, tenant],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)


def outcome(process, what):
    """The program's JSON line, once it ended."""
    try:
        out, err = process.communicate(timeout=PROGRAM_TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise StepFailed(f"{what}: the program had no answer after {PROGRAM_TIMEOUT} s; it printed {err[-2000:]}")
    lines = out.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"exit_status": process.returncode, "exception": err[-2000:]}


def as_user(desktop, process, what, answer):
    """Waits for the program's answer, answering whatever Sesame shows meanwhile (answer_meanwhile).
    Returns the program's JSON with what the user saw meanwhile (`shown`, in order; `questions`;
    `sign_ins`) and the broker calls Sesame traced."""
    app = desktop.app
    mark = app.trace.mark()
    try:
        meanwhile = answer_meanwhile(desktop, lambda: process.poll() is not None, what, answer, mark)
    except BaseException:
        process.kill()
        raise
    result = outcome(process, what)
    return {**result, **meanwhile, "broker_calls": broker_calls(app, mark), "events": told_events(app, mark)}


def step(desktop, script, client, command, answer=None, cache_of=None, tenant="organizations"):
    what = f"{script} {command} ({tenant})"
    return as_user(desktop, run_program(script, client, command, cache_of, tenant), what, answer)


def azure_identity(desktop, client, tenant, command):
    """azure_identity_app.py (the Azure SDK's broker credential) for `client` at `tenant`."""
    environment = {**os.environ, "HOME": os.path.join(scratch, "home")}
    process = subprocess.Popen([sys.executable, os.path.join(HERE, "azure_identity_app.py"), client, tenant,
                                os.path.join(scratch, "azure-identity-record.json"), command],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    return as_user(desktop, process, f"azure_identity_app.py {command}", None)


def broker_flow(desktop):
    desktop.wait_for_broker()

    # 1. The first program signs in: Sesame shows its sign-in page and asks about the program;
    # the user signs in as megan (password, SMS code) and allows it always. The program gets a token Graph takes.
    first = "msal_broker_app.py"
    seen["first"] = step(desktop, first, first_client, "interactive", "Always allow this program")
    # 2. The program lists megan (from its own cache).
    seen["accounts"] = step(desktop, first, first_client, "accounts")
    # 3. Its access token has expired (it lives 6 s here): a new one, silently — no page, no
    # question.
    expires = ((seen["first"].get("token") or {}).get("claims") or {}).get("exp", 0)
    # The real clock, on purpose: MSAL's broker client and the emulator each judge `exp` by it,
    # in programs of their own whose clocks a test cannot move. Bounded by the token's 6 s.
    time.sleep(max(0, expires + 1 - time.time()))
    seen["silent_after_expiry"] = time.time() > expires > 0
    seen["silent"] = step(desktop, first, first_client, "silent")
    # 4. Another program, with another app registration, is asked about on its own: allowed.
    # 3b. The same program and app with the other authority forms developers write — the tenant's
    # domain name, its id, `common` — each a sign-in, then a token without interaction.
    for tenant in ("contoso.onmicrosoft.com", tenant_id, "common"):
        form = "domain" if "." in tenant else "common" if tenant == "common" else "tenant_id"
        cache = f"msal_broker_app_{form}.py"
        seen[f"form_{form}"] = {"interactive": step(desktop, first, first_client, "interactive", cache_of=cache, tenant=tenant),
                                "silent": step(desktop, first, first_client, "silent", cache_of=cache, tenant=tenant)}
    second = "msal_second_app.py"
    seen["second"] = step(desktop, second, second_client, "interactive", "Always allow this program")
    # 4b. The Azure SDK's broker credential (azure-identity-broker) for the second app at the
    # tenant's domain name: its AuthenticationRecord kept, and a later run silent from it.
    seen["azure_identity"] = {"authenticate": azure_identity(desktop, second_client, "contoso.onmicrosoft.com", "authenticate"),
                              "silent": azure_identity(desktop, second_client, "contoso.onmicrosoft.com", "silent")}
    # 4c. MSAL without the broker, every authority form, instance discovery on: no Sesame involved.
    plain = subprocess.run([sys.executable, os.path.join(HERE, "plain_msal_app.py"), first_client, "organizations", "common",
                            "contoso.onmicrosoft.com", tenant_id], capture_output=True, text=True, timeout=300)
    seen["plain_msal"] = json.loads(plain.stdout.strip().splitlines()[-1]) if plain.stdout.strip() else {"error": plain.stderr[-2000:]}
    # 5. A third script presenting the first one's app registration is, to the kernel, the same
    # program — python — and the first question said Always covers every program python runs: a
    # token with no page and no question. As a third app nobody decided about, it is asked: denied,
    # it gets an error and no token; asked again, the Deny stands (no page, no question).
    third = "msal_third_app.py"
    seen["third_same_app"] = step(desktop, third, first_client, "silent", cache_of=first)
    seen["third_denied"] = step(desktop, third, third_client, "interactive", "Deny this program")
    seen["third_again"] = step(desktop, third, third_client, "interactive")
    # 6. The first program signs out; the second one's sign-in stays: a new token, silently.
    seen["removed"] = step(desktop, first, first_client, "remove")
    seen["accounts_after_remove"] = step(desktop, first, first_client, "accounts")
    seen["second_silent"] = step(desktop, second, second_client, "silent")
    seen["keyring_items"] = desktop.bus.keyring_labels()


def control(path):
    """The emulator's control endpoint (what an administrator does in the Entra admin center)."""
    request = urllib.request.Request(f"{broker_e2e.AUTHORITY_HOST}/.emulator/{path}", data=b"", method="POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status


def device_flow(desktop):
    desktop.wait_for_broker()
    app = desktop.app
    # Megan registers the computer from the account menu (the window's own sample's sign-in,
    # under way at the start, is cancelled for it), on the registration's sign-in page.
    app.ui.from_menu("Account", "Register This Computer…")
    app.ui.type("Name of this computer", "megan-laptop")
    app.ui.click("Register this computer")
    app.sign_in_entra(broker_e2e.USER)
    seen["device_id"] = app.trace.wait_for("device-registered").get("deviceId")
    app.ui.click("Close this message")
    # The program: asked about; its app needs megan's consent, which the PRT is not, so a page
    # shows — with the device's credential: the consent only.
    seen["first"] = step(desktop, "msal_broker_app.py", first_client, "interactive", "Always allow this program")
    # Another program, whose app an administrator consented to for everyone: asked about, and no page at all.
    control(f"clients/{second_client}/adminConsent")
    seen["second"] = step(desktop, "msal_second_app.py", second_client, "interactive", "Always allow this program")
    seen["silent"] = step(desktop, "msal_broker_app.py", first_client, "silent")


desktop = BrokerDesktop(binary, scratch, os.path.join(scratch, "trace-1.jsonl"),
                        storage="secret-service" if flow_name == "device" else "files")
try:
    (device_flow if flow_name == "device" else broker_flow)(desktop)
except StepFailed as failure:
    seen["failed"] = str(failure)
    seen["last_events"] = [" ".join(f"{key}={value}" for key, value in event.items())
                           for event in desktop.app.trace.events()[-25:]]
    print(json.dumps(seen))
    raise
finally:
    desktop.quit()
print(json.dumps(seen))
