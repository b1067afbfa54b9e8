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

from sesame_e2e import Widgets, descendants, descriptors, inheritable_descriptors, shared_descriptors, wait
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
# A program asks the identity broker the activated service serves; `sesame doctor` lists the call
# (the service keeps the broker's call log, as the window does).
version = subprocess.run(["gdbus", "call", "--session", "--dest", "com.microsoft.identity.broker1", "--object-path",
                          "/com/microsoft/identity/broker1", "--method", "com.microsoft.identity.Broker1.getLinuxBrokerVersion",
                          "0.0", "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", '{"msalCppVersion": "1.0"}'],
                         capture_output=True, text=True, timeout=60)
seen["broker_version"] = version.stdout.strip()
started = time.monotonic()
doctor = subprocess.run([binary, "doctor", f"--emulator={emulator}"], capture_output=True, text=True, timeout=120)
seen["doctor_took"] = round(time.monotonic() - started, 1)
seen["doctor_broker"] = [line.strip() for line in doctor.stdout.splitlines() if "broker" in line]

# A program asks for a token: the service's window asks the user, who allows it once.
asking = subprocess.Popen(["gdbus", "call", "--session", "--dest", NAME, "--object-path", PATH, "--method",
                           f"{INTERFACE}.GetAccessToken", "myGraphService", "", "[]"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
ui = Widgets.of_process(trace + ".window")
seen["question"] = wait("the question", lambda: next(
    (ui.text(label) for label in ui.all("label", "Program asking for access") if ui.text(label)), None))
seen["windows_while_asking"] = len(windows())
face = windows()[0]


def forge_answers():
    """What another program of the user's could try while the question is on screen: write an
    "always" answer into every descriptor of the window's that it can open, and — with ptrace's
    permission, as root or an unhardened same user has it — take the window's channel itself
    (pidfd_getfd) and answer on it. Returns what it managed to write, by descriptor."""
    import ctypes
    import socket as sockets
    forged = json.dumps({"id": 1, "answer": "always"}) + "\n"
    written = {}
    for fd, target in descriptors(face).items():
        try:
            handle = os.open(f"/proc/{face}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            written[fd] = f"{target}: not opened ({error.strerror})"
            continue
        try:
            os.write(handle, forged.encode())
            written[fd] = f"{target}: written"
        except OSError as error:
            written[fd] = f"{target}: not written ({error.strerror})"
        finally:
            os.close(handle)
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = libc.syscall(434, face, 0)  # pidfd_open
    channel = libc.syscall(438, pidfd, 3, 0) if pidfd >= 0 else -1  # pidfd_getfd
    if channel >= 0:
        taken = sockets.socket(fileno=channel)
        # With any token the window might have been given, and with none.
        taken.sendall((json.dumps({"id": 1, "answer": "always", "token": "guessed"}) + "\n" + forged).encode())
        taken.detach()
        os.close(channel)
        written["taken channel"] = "sent"
    else:
        written["taken channel"] = f"not taken (errno {ctypes.get_errno()})"
    if pidfd >= 0:
        os.close(pidfd)
    return written


seen["forged"] = forge_answers()
# One real second for a forged answer to take effect, had it been taken: an answer ignored makes no
# event to wait for, so the question still on screen after it is what is checked.
time.sleep(1)
seen["question_after_forgery"] = next(
    (ui.text(label) for label in ui.all("label", "Program asking for access") if ui.text(label)), None)
seen["asked_before_answer"] = asking.poll() is None
# Nothing the window holds is another program's to hold: none of its descriptors is the
# service's, and none of its children's (WebKit's, when it shows pages) is the window's.
seen["face_holds_of_service"] = shared_descriptors(service, face, private_folders=[scratch])
seen["face_children_hold"] = [held for child in descendants(face) for held in shared_descriptors(face, child, [scratch])]
# Nor would a program either of them starts inherit anything: every socket, pipe and file of theirs
# is close-on-exec.
seen["inheritable"] = inheritable_descriptors(service, [scratch]) + inheritable_descriptors(face, [scratch])
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
with open(trace, encoding="utf-8") as lines:
    events = [json.loads(line) for line in lines if line.strip()]
seen["foreign_dropped"] = len([e for e in events if e.get("event") == "service-window-foreign"])
access_file = os.path.join(scratch, "data", "sesame", "program-access.json")
seen["decisions_kept"] = open(access_file, encoding="utf-8").read() if os.path.exists(access_file) else ""

# A new script runs `sesame token`: the same outcome whether no Sesame runs (D-Bus starts the
# service, whose window asks) or Sesame's window is open (it asks): asked once about python,
# "Allow once", a token; meanwhile the command says on stderr that it waits for the answer.
script = os.path.join(scratch, "new-script.py")
with open(script, "w", encoding="utf-8") as code:
    code.write("import subprocess, sys\n"
               f"result = subprocess.run([{binary!r}, 'token', '--account-type', 'myGraphService', '--emulator', {emulator!r}],"
               " capture_output=True, text=True)\n"
               "sys.stdout.write(result.stdout); sys.stderr.write(result.stderr); sys.exit(result.returncode)\n")


def run_script(window_of):
    """Runs the script; answers "Allow this program once" in the window `window_of()` finds."""
    process = subprocess.Popen([sys.executable, script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ui = window_of()
    where = wait("the question about the script", lambda: next(
        (ui.text(label) for label in ui.all("label", "Where the program is") if ui.text(label)), None))
    ui.click("Allow this program once")
    out, err = process.communicate(timeout=120)
    return {"status": process.returncode, "jwt": out.startswith("eyJ"), "where": where,
            "waited": "waiting for your answer in Sesame's window" in err, "error": err[-800:]}


os.kill(service, 15)
wait("the service to end", lambda: not os.path.exists(f"/proc/{service}"), timeout=30)
seen["script_without_sesame"] = run_script(lambda: Widgets.of_process(trace + ".window"))
window_trace = os.path.join(scratch, "window.jsonl")
os.kill(owner_pid(), 15)
window = subprocess.Popen([binary, f"--emulator={emulator}", f"--trace-events={window_trace}"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    wait("the window to serve the bus", lambda: owner_pid() == window.pid)
    seen["script_with_window"] = run_script(lambda: Widgets.of_process(window_trace))
finally:
    window.terminate()
    window.wait(timeout=30)

print(json.dumps(seen))
