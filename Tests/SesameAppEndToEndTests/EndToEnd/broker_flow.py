"""Programs built on MSAL for Python sign in through Sesame as the desktop's identity broker.

    microsoft_hosts.sh ADDRESS CA -- python broker_flow.py SESAME_BINARY SCRATCH_DIR CLIENT_ID CLIENT_ID2

Run where login.microsoftonline.com is the identity emulator (microsoft_hosts.sh; REQUESTS_CA_BUNDLE
names its CA for MSAL's own requests). The app runs on the session bus SESAME_E2E_APP_BUS names,
where this flow first starts gnome-keyring with an unlocked "login" collection, as a desktop
session has one: pymsalruntime keeps its accounts there, and without it MSAL's silent sign-in
never reaches the broker. Sesame keeps its own sign-ins in files (its storage choice is made for
it), so the keyring holds only what MSAL's programs put there.

The programs are msal_broker_app.py (CLIENT_ID), msal_second_app.py (CLIENT_ID2) and
msal_third_app.py (CLIENT_ID again: another program of the same app registration): MSAL,
unchanged, with `enable_broker_on_linux=True`, each run once per step as a person runs a command.
Whatever Sesame shows meanwhile — its sign-in pages (driven through WebDriver) and its question
about the program (answered through the accessibility tree) — is answered as a user would, in
whichever order it comes. Prints one JSON object: what was seen. BrokerEndToEndTests.swift says
what must hold.
"""
import json
import os
import subprocess
import sys

from gi.repository import Gio, GLib
from sesame_e2e import Sesame, StepFailed, isolate_app_environment, wait

binary, scratch, first_client, second_client = sys.argv[1:5]
bus_address = os.environ["SESAME_E2E_APP_BUS"]
HERE = os.path.dirname(os.path.abspath(__file__))
AUTHORITY_HOST = "https://login.microsoftonline.com"
BROKER = "com.microsoft.identity.broker1"
USER = "alex@contoso.onmicrosoft.com"
# How long a step waits for the program's answer, or for what Sesame shows meanwhile: far below
# the 300 s pymsalruntime waits for each broker call.
PROGRAM_TIMEOUT = 60
# The trace events each step reports, as "event key=value…" (the broker's own, and the window's).
TOLD = ("access-question", "access-answer", "sign-in-page-requested", "redirect-intercepted", "token-acquired",
        "broker-call", "broker-refused", "broker-sign-in", "broker-signed-out", "broker-token", "broker-failed")
isolate_app_environment(os.path.join(scratch, "data"))
seen = {}
# The account types of the window's own sample (its sign-in page is not a program's).
own_account_types = set()
bus = Gio.DBusConnection.new_for_address_sync(
    bus_address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)


def call(destination, path, interface, method, arguments, reply_type):
    return bus.call_sync(destination, path, interface, method, arguments, GLib.VariantType(reply_type),
                         Gio.DBusCallFlags.NONE, 5000, None).unpack()


def has_owner(name):
    return call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                GLib.Variant("(s)", (name,)), "(b)")[0]


def start_keyring():
    """gnome-keyring on the app's bus, its "login" collection unlocked with a password of the
    test's (read from stdin, as a desktop's login does), in a home folder of its own."""
    home = os.path.join(scratch, "home")
    environment = {**os.environ, "HOME": home, "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
                   "DBUS_SESSION_BUS_ADDRESS": bus_address}
    os.makedirs(home, exist_ok=True)
    with open(os.path.join(scratch, "keyring.log"), "w") as log:
        # The daemon forks and keeps what it was given as stdout: a file, never a pipe waited on.
        subprocess.run(["gnome-keyring-daemon", "--unlock", "--components=secrets"], input=b"sesame-broker-test",
                       stdout=log, stderr=log, env=environment, timeout=30, check=True)

    def login_collection():
        if not has_owner("org.freedesktop.secrets"):
            return None
        path = call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias",
                    GLib.Variant("(s)", ("login",)), "(o)")[0]
        return path if path != "/" else None
    wait("the keyring's unlocked login collection on the app's bus", login_collection)


def keyring_labels():
    """The labels of what the keyring's login collection holds (pymsalruntime's "MSAL" items)."""
    collection = call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias",
                      GLib.Variant("(s)", ("login",)), "(o)")[0]

    def label(item):
        return call("org.freedesktop.secrets", item, "org.freedesktop.DBus.Properties", "Get",
                    GLib.Variant("(ss)", ("org.freedesktop.Secret.Item", "Label")), "(v)")[0]
    items = call("org.freedesktop.secrets", collection, "org.freedesktop.DBus.Properties", "Get",
                 GLib.Variant("(ss)", ("org.freedesktop.Secret.Collection", "Items")), "(v)")[0]
    return sorted({label(item) for item in items})


def run_program(script, client, command):
    """Starts one of the MSAL programs (its token cache its own, under SCRATCH_DIR)."""
    cache = os.path.join(scratch, f"msal-cache-{os.path.splitext(script)[0]}.json")
    environment = {**os.environ, "HOME": os.path.join(scratch, "home")}
    return subprocess.Popen([sys.executable, os.path.join(HERE, script), client, cache, command],
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


def question_seen(app):
    """The question Sesame shows now, as the user reads it."""
    ui = app.ui
    return {
        "question": ui.text(ui.find("label", "Program asking for access")),
        "program": ui.text(ui.find("label", "Where the program is")),
        "permissions": ui.text(ui.find("label", "Permissions the program would get")),
        "always_offered": ui.is_visible("push button", "Always allow this program"),
    }


def positions(app, event, since, **fields):
    """Where in the trace each `event` after `since` is (its index, for `since=`)."""
    return [index for index, found in enumerate(app.trace.events()) if index >= since and found.get("event") == event
            and all(str(found.get(key)) == str(value) for key, value in fields.items())]


def sign_in_pages(app, request):
    """Goes through the identity service's pages in Sesame's window as alex does, whichever come
    (the user name page and what follows it, the account picker of a session, consent), until the
    window takes the redirect of the sign-in Sesame asked for at `request` (its position in the
    trace). Returns what the pages showed.

    Until a page loads for this sign-in, the view still shows the one before it (the sample's own
    sign-in page, or the last page of an earlier sign-in, whose redirect was never loaded), with
    the same fields: nothing is touched before then. A session may answer at once, no page shown."""
    pages = {}

    def redirected():
        return bool(app.trace.find("redirect-intercepted", since=request))
    app.wait("the program's sign-in page to load, or the window taking the redirect",
             lambda: redirected() or app.trace.find("page-loaded", since=request))
    while not redirected():
        page = app.wait("the next sign-in page, or the window taking the redirect", lambda: (
            "done" if redirected() else
            next((name for name, element_id in (("user name", "i0116"), ("pick an account", "signedInAccount"),
                                                 ("consent", "permissionList"), ("stay signed in", "KmsiCheckboxField"))
                  if app.element(element_id)), None)))
        if page == "done":
            break
        pages.setdefault("shown", []).append(page)
        if page == "user name":
            app.sign_in_entra(USER, seen=pages)
        elif page == "pick an account":
            app.submit("signedInAccount")
        elif page == "consent":
            app.answer_consent(pages)
        else:
            app.submit("idSIButton9")
    return pages


def as_user(app, process, what, answer):
    """Waits for the program's answer, answering whatever Sesame shows meanwhile, as it comes: its
    sign-in pages (as alex) and its question about the program (`answer`: the button's accessible
    name, "Always" becoming "Allow once" where it is not offered; None where no question is
    expected: then it is denied). The window's own sample's sign-in page is not the program's.
    Returns the program's JSON with what the user saw meanwhile (`shown`, in order; `questions`;
    `sign_ins`) and the broker calls Sesame traced."""
    mark = app.trace.mark()
    shown, questions, sign_ins = [], [], []

    def sign_in_requests():
        return [index for index in positions(app, "sign-in-page-requested", mark)
                if app.trace.events()[index].get("accountType") not in own_account_types]

    def next_thing():
        """The first of what Sesame showed and the user has not answered yet, in the trace's order."""
        pending = positions(app, "access-question", mark)[len(questions):1 + len(questions)]
        requested = sign_in_requests()[len(sign_ins):1 + len(sign_ins)]
        if pending or requested:
            return "question" if not requested or (pending and pending[0] < requested[0]) else "sign-in"
        return "answered" if process.poll() is not None else None
    try:
        while (thing := wait(f"{what}: Sesame's sign-in page or its question, or the program's answer", next_thing,
                             timeout=PROGRAM_TIMEOUT)) != "answered":
            shown.append(thing)
            if thing == "question":
                question = question_seen(app)
                button = answer or "Deny this program"
                if button == "Always allow this program" and not question["always_offered"]:
                    button = "Allow this program once"
                question["answered"] = button
                questions.append(question)
                app.ui.click(button)
                wait("Sesame to take the answer", lambda: len(app.trace.find("access-answer", since=mark)) >= len(questions))
            else:
                request = sign_in_requests()[len(sign_ins)]
                sign_ins.append({"accountType": app.trace.events()[request].get("accountType"), **sign_in_pages(app, request)})
    except BaseException:
        process.kill()
        raise
    result = outcome(process, what)
    calls = app.trace.find("broker-call", since=mark)
    return {**result, "shown": shown, "questions": questions, "sign_ins": sign_ins,
            "broker_calls": [{key: entry.get(key) for key in ("method", "program", "clientId")} for entry in calls],
            "events": [" ".join([event.get("event", "")] + [f"{key}={value}" for key, value in event.items()
                                                            if key not in ("event", "t", "program")])
                       for event in app.trace.events()[mark:] if event.get("event") in TOLD]}


def step(app, script, client, command, answer=None):
    what = f"{script} {command}"
    return as_user(app, run_program(script, client, command), what, answer)


def broker_flow(app):
    # Sesame serves the broker on its bus once its window is up.
    wait(f"Sesame to own {BROKER} on its session bus", lambda: has_owner(BROKER))
    # The window's own sample asks for its sign-in page at the start.
    own_account_types.update(event.get("accountType") for event in app.trace.find("sign-in-page-requested"))

    # 1. The first program signs in: Sesame shows its sign-in page and asks about the program;
    # the user signs in as alex and allows it always. The program gets a token Graph takes.
    first = "msal_broker_app.py"
    seen["first"] = step(app, first, first_client, "interactive", "Always allow this program")
    # 2. The program lists alex (from its own cache).
    seen["accounts"] = step(app, first, first_client, "accounts")
    # 3. Its access token is due (it lives 2 minutes, inside every cache's 5-minute margin): a new
    # one, silently — no page, no question.
    seen["silent"] = step(app, first, first_client, "silent")
    # 4. Another program, with another app registration, is asked about on its own: allowed.
    second = "msal_second_app.py"
    seen["second"] = step(app, second, second_client, "interactive", "Always allow this program")
    # 5. A third program presenting the first one's app registration is another program: asked,
    # denied, it gets an error and no token; asked again, the Deny stands (no page, no question).
    third = "msal_third_app.py"
    seen["third_denied"] = step(app, third, first_client, "interactive", "Deny this program")
    seen["third_again"] = step(app, third, first_client, "interactive")
    # 6. The first program signs out; the second one's sign-in stays: a new token, silently.
    seen["removed"] = step(app, first, first_client, "remove")
    seen["accounts_after_remove"] = step(app, first, first_client, "accounts")
    seen["second_silent"] = step(app, second, second_client, "silent")
    seen["keyring_items"] = keyring_labels()


start_keyring()
storage = os.path.join(scratch, "data", "sesame")
os.makedirs(storage, exist_ok=True)
with open(os.path.join(storage, "storage"), "w") as choice:
    # Sesame's own sign-ins in files, not in the keyring MSAL's programs use.
    choice.write("files\n")
app = Sesame(binary, AUTHORITY_HOST, os.path.join(scratch, "trace-1.jsonl"), "directory")
try:
    broker_flow(app)
except StepFailed as failure:
    seen["failed"] = str(failure)
    seen["last_events"] = [" ".join(f"{key}={value}" for key, value in event.items()) for event in app.trace.events()[-25:]]
    print(json.dumps(seen))
    raise
finally:
    app.quit()
print(json.dumps(seen))
