"""The account service as D-Bus activation runs it all session long: no GTK, no WebKit, and a
window of its own only while the user is asked.

    python service_face_flow.py SESAME_BINARY EMULATOR_URL SCRATCH_DIR

The session bus (DBUS_SESSION_BUS_ADDRESS, a bus of the test's own) activates `sesame --service`
from the .service file the test wrote; alex is signed in already (the test did it with the
device code). A program (gdbus) asks for a token: the service starts its window, which asks;
"Allow this program once" is pressed through the accessibility tree. Prints one JSON object:
what was seen. ServiceWithoutWindowTests.swift says what must hold.
"""
import json
import os
import subprocess
import sys
import time

from sesame_e2e import Widgets, wait
from gi.repository import Gio, GLib  # noqa: E402 — after sesame_e2e, which requires the versions

binary, emulator, scratch = sys.argv[1:4]
trace = os.path.join(scratch, "service.jsonl")
NAME, PATH, INTERFACE = "org.sesame.Sesame", "/org/sesame/Sesame", "org.sesame.Accounts1"
seen = {}

# The window the service starts registers on the accessibility bus AT_SPI_BUS_ADDRESS names (the
# test gave it to the session bus, which gives it to the service it activates).
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)


def owner_pid():
    """The process that owns the service's name."""
    answer = bus.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                           "GetConnectionUnixProcessID", GLib.Variant("(s)", (NAME,)), GLib.VariantType("(u)"),
                           Gio.DBusCallFlags.NONE, 5000, None)
    return answer.unpack()[0]


def libraries(pid):
    """The shared libraries a process has mapped, by file name."""
    with open(f"/proc/{pid}/maps", encoding="utf-8") as maps:
        return sorted({line.split()[-1].rsplit("/", 1)[-1] for line in maps if ".so" in line})


def windows():
    """The processes running Sesame's window for this service."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    arguments = cmdline.read().split(b"\0")
            except OSError:
                continue
            if b"--service-face" in arguments and (trace + ".window").encode() in arguments:
                found.append(int(entry))
    return found


# Activation: the first call starts the service, which answers without a window.
listing = subprocess.run(["gdbus", "call", "--session", "--dest", NAME, "--object-path", PATH, "--method",
                          f"{INTERFACE}.ListAccounts"], capture_output=True, text=True, timeout=60)
seen["list"] = {"status": listing.returncode, "out": listing.stdout, "error": listing.stderr[-500:]}
service = owner_pid()
seen["service_executable"] = os.path.basename(os.readlink(f"/proc/{service}/exe"))
seen["service_gui_libraries"] = [name for name in libraries(service)
                                 if name.startswith(("libgtk", "libgdk", "libwebkit", "libjavascriptcore"))]
seen["window_before"] = len(windows())

# A program asks for a token: the service's window asks the user, who allows it once.
asking = subprocess.Popen(["gdbus", "call", "--session", "--dest", NAME, "--object-path", PATH, "--method",
                           f"{INTERFACE}.GetAccessToken", "myGraphService", "", "[]"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
ui = Widgets.of_process(trace + ".window")
seen["question"] = wait("the question", lambda: next(
    (ui.text(label) for label in ui.all("label", "Program asking for access") if ui.text(label)), None))
seen["windows_while_asking"] = len(windows())
ui.click("Allow this program once")
out, err = asking.communicate(timeout=60)
seen["token"] = {"status": asking.returncode, "jwt": out.startswith("('eyJ"), "error": err[-500:]}
seen["service_gui_libraries_after"] = [name for name in libraries(service)
                                       if name.startswith(("libgtk", "libgdk", "libwebkit", "libjavascriptcore"))]

# With nothing left to ask, the window ends by itself; the service goes on.
start = time.monotonic()
wait("the window to end", lambda: not windows(), timeout=30)
seen["window_ended_after"] = round(time.monotonic() - start)
seen["service_still_running"] = owner_pid() == service
print(json.dumps(seen))
