"""Sesame as the desktop's identity broker, driven as a user answers it: what broker_flow.py (the
end-to-end test) and bench/broker_silent.py (`make bench`'s broker figure) share.

Both run where login.microsoftonline.com is the identity emulator (microsoft_hosts.sh), with
Sesame's window on the session bus SESAME_E2E_APP_BUS names (a bus of the caller's own), where
gnome-keyring first gets an unlocked "login" collection, as a desktop session has one:
pymsalruntime keeps its accounts there, and without it MSAL's silent sign-in never reaches the
broker. Sesame keeps its own sign-ins in files (its storage choice is made for it), so the keyring
holds only what MSAL's programs put there.

Whatever Sesame shows while a program waits for its answer — its sign-in pages (through WebDriver)
and its question about the program (through the accessibility tree) — is answered as a user
would, in whichever order it comes (`answer_meanwhile`).
"""
import os
import signal
import subprocess

from gi.repository import Gio, GLib
from sesame_e2e import Sesame, isolate_app_environment, wait

AUTHORITY_HOST = "https://login.microsoftonline.com"
BROKER = "com.microsoft.identity.broker1"
USER = "alex@contoso.onmicrosoft.com"
# How long a step waits for the program's answer, or for what Sesame shows meanwhile: far below
# the 300 s pymsalruntime waits for each broker call.
PROGRAM_TIMEOUT = 60
# The trace events a step reports, as "event key=value…" (the broker's own, and the window's).
TOLD = ("access-question", "access-answer", "sign-in-page-requested", "redirect-intercepted", "token-acquired",
        "broker-call", "broker-refused", "broker-sign-in", "broker-signed-out", "broker-token", "broker-failed")


class AppBus:
    """The session bus Sesame and the MSAL programs share (SESAME_E2E_APP_BUS)."""

    def __init__(self, address):
        self.address = address
        self.connection = Gio.DBusConnection.new_for_address_sync(
            address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)

    def call(self, destination, path, interface, method, arguments, reply_type):
        return self.connection.call_sync(destination, path, interface, method, arguments, GLib.VariantType(reply_type),
                                         Gio.DBusCallFlags.NONE, 5000, None).unpack()

    def has_owner(self, name):
        return self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                         GLib.Variant("(s)", (name,)), "(b)")[0]

    def start_keyring(self, home, log_path, unlocked=True):
        """gnome-keyring on this bus, its "login" collection unlocked with a password of the
        caller's (read from stdin, as a desktop's login does), in the home folder `home`; with
        `unlocked` False, started as a session that has not unlocked it (it loads it locked)."""
        # Its own runtime folder: gnome-keyring's control socket is there, and a daemon started in the
        # session's takes that socket over (a keyring D-Bus starts on demand afterwards, elsewhere,
        # would then start empty, and its first write wait for a password prompt nobody answers).
        runtime = os.path.join(home, "runtime")
        os.makedirs(runtime, mode=0o700, exist_ok=True)
        environment = {**os.environ, "HOME": home, "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
                       "XDG_RUNTIME_DIR": runtime, "DBUS_SESSION_BUS_ADDRESS": self.address}
        with open(log_path, "w") as log:
            # The daemon forks and keeps what it was given as stdout: a file, never a pipe waited on.
            if unlocked:
                subprocess.run(["gnome-keyring-daemon", "--unlock", "--components=secrets"], input=b"sesame-broker-test",
                               stdout=log, stderr=log, env=environment, timeout=30, check=True)
            else:
                subprocess.run(["gnome-keyring-daemon", "--components=secrets"], stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                               env=environment, timeout=30, check=True)

        def login_collection():
            if not self.has_owner("org.freedesktop.secrets"):
                return None
            path = self.call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service", "ReadAlias",
                             GLib.Variant("(s)", ("login",)), "(o)")[0]
            return path if path != "/" else None
        wait("the keyring's unlocked login collection on the app's bus", login_collection)

    def restart_keyring_locked(self, home, log_path):
        """The keyring as every fresh login finds it: its daemon ended, then started again without
        the password, so that it loads the "login" collection from its file, locked."""
        daemon = self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixProcessID",
                           GLib.Variant("(s)", ("org.freedesktop.secrets",)), "(u)")[0]
        os.kill(daemon, signal.SIGTERM)
        wait("the keyring daemon to end", lambda: not self.has_owner("org.freedesktop.secrets"))
        self.start_keyring(home, log_path, unlocked=False)

    def keyring_labels(self):
        """The labels of what the keyring's login collection holds (pymsalruntime's "MSAL" items)."""
        collection = self.call("org.freedesktop.secrets", "/org/freedesktop/secrets", "org.freedesktop.Secret.Service",
                               "ReadAlias", GLib.Variant("(s)", ("login",)), "(o)")[0]

        def label(item):
            return self.call("org.freedesktop.secrets", item, "org.freedesktop.DBus.Properties", "Get",
                             GLib.Variant("(ss)", ("org.freedesktop.Secret.Item", "Label")), "(v)")[0]
        items = self.call("org.freedesktop.secrets", collection, "org.freedesktop.DBus.Properties", "Get",
                          GLib.Variant("(ss)", ("org.freedesktop.Secret.Collection", "Items")), "(v)")[0]
        return sorted({label(item) for item in items})


class BrokerDesktop:
    """A desktop session whose identity broker is Sesame: the keyring on the app's bus, then
    Sesame's window (under WebDriver, its sign-ins in files under SCRATCH/data), serving the
    broker's name."""

    def __init__(self, binary, scratch, trace_path, sample="directory", storage="files"):
        """`storage`: where Sesame keeps its own sign-ins — "files", or "secret-service" (the
        keyring, beside MSAL's programs' items: a computer registered with the organization keeps
        its identity there)."""
        self.scratch = scratch
        self.home = os.path.join(scratch, "home")
        isolate_app_environment(os.path.join(scratch, "data"))
        self.bus = AppBus(os.environ["SESAME_E2E_APP_BUS"])
        self.bus.start_keyring(self.home, os.path.join(scratch, "keyring.log"))
        storage_folder = os.path.join(scratch, "data", "sesame")
        os.makedirs(storage_folder, exist_ok=True)
        with open(os.path.join(storage_folder, "storage"), "w") as choice:
            # By default Sesame's own sign-ins in files, not in the keyring MSAL's programs use.
            choice.write(storage + "\n")
        self.app = Sesame(binary, AUTHORITY_HOST, trace_path, sample)
        # The account types of the window's own sample (its sign-in page is not a program's).
        self.own_account_types = set()

    def wait_for_broker(self):
        """Until Sesame serves the broker on its bus (once its window is up)."""
        wait(f"Sesame to own {BROKER} on its session bus", lambda: self.bus.has_owner(BROKER))
        # The window's own sample asks for its sign-in page at the start.
        self.own_account_types.update(event.get("accountType") for event in self.app.trace.find("sign-in-page-requested"))

    def quit(self):
        self.app.quit()


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


def answer_meanwhile(desktop, answered, what, answer, mark):
    """Until `answered()` is true (the program has its answer), answers whatever Sesame shows
    after the trace position `mark`, as it comes: its sign-in pages (as alex) and its question
    about the program (`answer`: the button's accessible name, "Always" becoming "Allow once"
    where it is not offered; None where no question is expected: then it is denied). The window's
    own sample's sign-in page is not the program's. Returns what the user saw meanwhile (`shown`,
    in order; `questions`; `sign_ins`)."""
    app = desktop.app
    shown, questions, sign_ins = [], [], []

    def sign_in_requests():
        return [index for index in positions(app, "sign-in-page-requested", mark)
                if app.trace.events()[index].get("accountType") not in desktop.own_account_types]

    def next_thing():
        """The first of what Sesame showed and the user has not answered yet, in the trace's order."""
        pending = positions(app, "access-question", mark)[len(questions):1 + len(questions)]
        requested = sign_in_requests()[len(sign_ins):1 + len(sign_ins)]
        if pending or requested:
            return "question" if not requested or (pending and pending[0] < requested[0]) else "sign-in"
        return "answered" if answered() else None
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
    return {"shown": shown, "questions": questions, "sign_ins": sign_ins}


def broker_calls(app, mark):
    """The broker calls Sesame traced after `mark`: method, program, client id."""
    return [{key: entry.get(key) for key in ("method", "program", "clientId")} for entry in app.trace.find("broker-call", since=mark)]


def told_events(app, mark):
    """The TOLD events after `mark`, as "event key=value…" (no program: it is long)."""
    return [" ".join([event.get("event", "")] + [f"{key}={value}" for key, value in event.items()
                                                 if key not in ("event", "t", "program")])
            for event in app.trace.events()[mark:] if event.get("event") in TOLD]
