"""Sesame over a locked keyring, as a person meets it: the sign-ins are there, behind the lock.

    python keyring_flow.py SESAME_BINARY EMULATOR_URL SCRATCH_DIR

gnome-keyring runs on the session bus SESAME_E2E_APP_BUS names (a bus of the test's own), its
"login" collection unlocked with a password, and Sesame keeps its sign-ins there. Alex signs in
through the window (WebDriver); the collection is locked (the Secret Service's own Lock, as the
screen locking does); then the commands (run by a program: no terminal) and `sesame doctor` say
what holds, and the window, started again, offers to unlock rather than to sign in: its Unlock
shows the keyring's own prompt (gcr-prompter), the password is typed there, and alex is back.
Last, a fresh login: the keyring's daemon starts again, its collection loaded locked; the command
and the window say it is locked as before.
Prints one JSON object: what was seen. KeyringEndToEndTests.swift says what must hold.
"""
import json
import os
import signal
import subprocess
import sys

from broker_e2e import AppBus
from gi.repository import Atspi, GLib
from sesame_e2e import Sesame, StepFailed, Widgets, isolate_app_environment, typed_at_terminal, wait

binary, emulator, scratch = sys.argv[1:4]
data = os.path.join(scratch, "data")
isolate_app_environment(data)
bus = AppBus(os.environ["SESAME_E2E_APP_BUS"])
bus.start_keyring(os.path.join(scratch, "home"), os.path.join(scratch, "keyring.log"))
KEYRING_PASSWORD = "sesame-broker-test"
# Sesame's store is the keyring (what the first run on a desktop records).
os.makedirs(os.path.join(data, "sesame"), exist_ok=True)
with open(os.path.join(data, "sesame", "storage"), "w") as marker:
    marker.write("secret-service\n")
seen = {}


def sesame_items():
    return sorted(label for label in bus.keyring_labels() if label.startswith("Sesame token cache"))


def command(*arguments):
    """`sesame ARGUMENTS` as a program runs it: no terminal, standard input empty."""
    result = subprocess.run([binary, *arguments, f"--emulator={emulator}"], stdin=subprocess.DEVNULL, capture_output=True,
                            text=True, timeout=120)
    return {"status": result.returncode, "stdout": result.stdout[-3000:], "stderr": result.stderr[-1500:]}


# 1. Alex signs in through the window; the account is in the keyring.
app = Sesame(binary, emulator, os.path.join(scratch, "trace-1.jsonl"), "directory")
try:
    app.sign_in_entra("alex@contoso.onmicrosoft.com")
    app.trace.wait_for("token-acquired")
except StepFailed:
    app.report_where_it_stood(scratch)
    raise
finally:
    app.quit()
seen["items_signed_in"] = sesame_items()

# 2. The keyring is locked.
collection = bus.call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias",
                      GLib.Variant("(s)", ("login",)), "(o)")[0]
bus.call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "Lock",
         GLib.Variant("(ao)", ([collection],)), "(aoo)")

# 3. The commands, run by a program: no dialog out of nowhere, and no "nobody is signed in".
seen["token"] = command("token", "--account-type", "myGraphService")
seen["accounts"] = command("accounts")
seen["login"] = command("login", "--account-type", "myGraphService", "--device-code")
seen["doctor"] = command("doctor")
# The account service the program's `sesame token` started ends (the window serves next).
if bus.has_owner("org.sesame.Sesame"):
    service = bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                       GLib.Variant("(s)", ("org.sesame.Sesame",)), "(u)")[0]
    os.kill(service, signal.SIGTERM)
    wait("the account service to end", lambda: not bus.has_owner("org.sesame.Sesame"))

# 4. The window: the page says the keyring is locked and offers Unlock, no sign-in page.
trace_path = os.path.join(scratch, "trace-2.jsonl")
app = Sesame(binary, emulator, trace_path, "directory")
try:
    app.ui.find("label", "Your keyring is locked")
    seen["window_labels"] = app.ui.label_texts()
    seen["sign_in_requested_while_locked"] = bool(app.trace.find("sign-in-page-requested"))
    app.ui.click("Unlock…")

    # The keyring's own prompt, a program of its own: the password typed into it.
    def prompter():
        desktop = Atspi.get_desktop(0)
        for index in range(desktop.get_child_count()):
            application = desktop.get_child_at_index(index)
            try:
                if application is not None and application.get_name() == "gcr-prompter":
                    widgets = Widgets(application)
                    fields = widgets.all("password text")
                    if fields:
                        return widgets, fields[0]
            except GLib.Error:
                continue
        return None
    prompt, field = wait("the keyring's unlock prompt (gcr-prompter) with its password field", prompter)
    seen["prompt_labels"] = prompt.label_texts()
    field.set_text_contents(KEYRING_PASSWORD)
    prompt.click("Unlock")
    seen["unlock"] = app.trace.wait_for("keyring-unlock-answered").get("unlocked")
    # Alex is back: the directory lists people, with no sign-in since the lock.
    app.ui.find("table", "People")
    seen["sign_in_requested"] = bool(app.trace.find("sign-in-page-requested"))
finally:
    app.quit()

seen["items_after"] = sesame_items()
# Typed by the person at a terminal (no service runs now): the store itself, unlocked.
status, shown = typed_at_terminal(f"{binary} token --account-type myGraphService --emulator={emulator} > /dev/null; echo status=$?",
                                  dict(os.environ))
seen["token_after"] = {"status": int(shown.split("status=")[-1].split()[0]) if "status=" in shown else -1}

# 5. A fresh login: the keyring's daemon starts again with the collection locked (gnome-keyring
# loads it so until the session unlocks it). Still locked, not "nobody is signed in".
bus.restart_keyring_locked(os.path.join(scratch, "home"), os.path.join(scratch, "keyring-2.log"))
seen["token_fresh_login"] = command("token", "--account-type", "myGraphService")
if bus.has_owner("org.sesame.Sesame"):
    service = bus.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                       GLib.Variant("(s)", ("org.sesame.Sesame",)), "(u)")[0]
    os.kill(service, signal.SIGTERM)
    wait("the account service to end", lambda: not bus.has_owner("org.sesame.Sesame"))
app = Sesame(binary, emulator, os.path.join(scratch, "trace-3.jsonl"), "directory")
try:
    app.ui.find("label", "Your keyring is locked")
    seen["window_labels_fresh_login"] = app.ui.label_texts()
    seen["unlock_offered_fresh_login"] = bool(app.ui.find("push button", "Unlock…"))
    seen["sign_in_requested_fresh_login"] = bool(app.trace.find("sign-in-page-requested"))
except StepFailed:
    app.report_where_it_stood(scratch)
    raise
finally:
    app.quit()
print(json.dumps(seen))
