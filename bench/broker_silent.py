"""`make bench`'s broker figure, inside the namespace where Microsoft is this machine.

    microsoft_hosts.sh ADDRESS CA -- python broker_silent.py SESAME_BINARY SCRATCH_DIR CLIENT_ID CALLS ROUNDS

bench.py runs it as BrokerEndToEndTests runs broker_flow.py: the identity emulator serves
login.microsoftonline.com:443 (its access tokens live 120 s), Sesame's window runs under WebDriver
on the session bus SESAME_E2E_APP_BUS names, beside an unlocked keyring (Tests/SesameAppEndToEndTests/
EndToEnd/broker_e2e.py, shared with the test). The user (this script) signs alex in to the window's
own sample (for org.sesame.Accounts1), then msal_broker_silent.py — one warm MSAL for Python
process — signs in through the broker (Sesame's pages and question, answered here) and is allowed
GetAccessToken (its question too). Then ROUNDS rounds of CALLS calls of each kind, the kinds'
order rotating: `broker` (acquire_token_silent through the broker), `cache` (MSAL's own cache
lookup, broker off), `dbus` (GetAccessToken on the same Sesame), `refresh` (MSAL refreshing by
itself, broker off, on a copy of Sesame's refresh token for the app).

Prints one JSON object: each kind's timings (ms), how many broker calls and refreshes Sesame traced
during the broker rounds, and Sesame's own time per broker call (its trace: from `broker-call` to
`broker-token`, and the refresh's `token-request` latency), or {"failed": why}.
"""
import glob
import json
import os
import queue
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "Tests/SesameAppEndToEndTests/EndToEnd"))
from broker_e2e import USER, BrokerDesktop, answer_meanwhile, broker_calls  # noqa: E402
from sesame_e2e import StepFailed  # noqa: E402

binary, scratch, client_id, calls, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
OWN_ACCOUNT_TYPE = "myGraphService"  # the directory sample's (Resources/settings/directory.plist)
# Warm-up calls of each kind, before the timed rounds: the first of each makes connections and
# fills caches that a program asking all day has made long before.
WARM_UP = 5
seen = {}


class Program:
    """msal_broker_silent.py, its commands written to its stdin, its answers read on a thread of
    their own (so that the user can answer Sesame while the program waits)."""

    def __init__(self):
        environment = {**os.environ, "HOME": os.path.join(scratch, "home")}
        self.errors = open(os.path.join(scratch, "program.err"), "w")
        self.process = subprocess.Popen([sys.executable, os.path.join(HERE, "msal_broker_silent.py"), client_id, "User.Read",
                                         OWN_ACCOUNT_TYPE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.errors,
                                        text=True, env=environment)
        self.answers = queue.Queue()
        threading.Thread(target=lambda: [self.answers.put(line) for line in self.process.stdout], daemon=True).start()

    def ask(self, command, desktop=None, answer=None):
        """The program's answer to `command`; with `desktop`, what Sesame shows meanwhile is answered
        (`answer`: the question's button)."""
        mark = desktop.app.trace.mark() if desktop is not None else 0
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        if desktop is not None:
            meanwhile = answer_meanwhile(desktop, lambda: not self.answers.empty() or self.process.poll() is not None, command,
                                         answer, mark)
            seen.setdefault("shown", {})[command] = meanwhile["shown"]
        deadline = time.monotonic() + 300
        while True:
            try:
                line = self.answers.get(timeout=1)
                break
            except queue.Empty:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.errors.flush()
                    with open(self.errors.name, encoding="utf-8") as printed:
                        raise StepFailed(f"{command}: the program had no answer (exit status {self.process.poll()}); "
                                         f"it printed {printed.read()[-2000:]}") from None
        result = json.loads(line)
        if "error" in result:
            raise StepFailed(f"{command}: {result['error']}")
        return result

    def stop(self):
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.errors.close()


def sesame_cache():
    """Sesame's token cache file that holds the app's refresh token (its storage group `broker`)."""
    for path in glob.glob(os.path.join(scratch, "data", "sesame", "*.json")):
        with open(path, encoding="utf-8") as stored:
            entries = json.load(stored)
        if any(entry.get("client_id") == client_id for entry in entries.get("RefreshToken", {}).values()):
            return path
    raise StepFailed(f"no token cache of Sesame's holds a refresh token for {client_id}")


def sesame_side(events):
    """Per broker call in `events` (a slice of the trace): ms from `broker-call` to `broker-token`
    (Sesame's own time, on its clock), and the refreshes' latency (`token-request` ms) meanwhile."""
    answered, refreshes, started = [], [], None
    for event in events:
        if event.get("event") == "broker-call" and event.get("method") == "acquireTokenSilently":
            started = event["t"]
        elif event.get("event") == "token-request" and started is not None:
            refreshes.append(float(event.get("ms", 0)))
        elif event.get("event") == "broker-token" and started is not None:
            answered.append((event["t"] - started) * 1000)
            started = None
    return answered, refreshes


def measure(desktop):
    app = desktop.app
    desktop.wait_for_broker()
    # alex signs in to the window's own sample: org.sesame.Accounts1 serves its account type.
    app.sign_in_entra(USER)
    app.trace.wait_for("token-acquired", accountType=OWN_ACCOUNT_TYPE)
    program = Program()
    try:
        mark = app.trace.mark()
        seen["interactive"] = program.ask("interactive", desktop, "Always allow this program")
        seen["interactive_calls"] = [call["method"] for call in broker_calls(app, mark)]
        program.ask("dbus-allow", desktop, "Always allow this program")
        cache_path = sesame_cache()
        commands = {"broker": "broker {}", "cache": "cache {}", "dbus": "dbus {}", "refresh": "refresh {} " + cache_path}
        for command in commands.values():
            program.ask(command.format(WARM_UP))
        timings = {kind: [] for kind in commands}
        broker_events = []
        for round_number in range(rounds):
            kinds = list(commands)
            kinds = kinds[round_number % len(kinds):] + kinds[:round_number % len(kinds)]
            for kind in kinds:
                mark = app.trace.mark()
                timings[kind] += program.ask(commands[kind].format(calls))["ms"]
                if kind == "broker":
                    # The trace is written by Sesame's main loop: its last events may come a moment later.
                    app.wait("Sesame to trace the round's broker calls",
                             lambda: len(app.trace.find("broker-token", since=mark)) >= calls)
                    broker_events += app.trace.events()[mark:]
                elif kind == "dbus":
                    # Each GetAccessToken a refresh too (`token-request`, traced as the exchange ends).
                    try:
                        app.wait("Sesame to trace the round's refreshes",
                                 lambda: len(app.trace.find("token-request", since=mark)) >= calls, timeout=2)
                    except StepFailed:
                        pass
                    seen["dbus_refreshes"] = seen.get("dbus_refreshes", 0) + len(app.trace.find("token-request", since=mark))
        seen["ms"] = timings
        seen["broker_methods"] = {}
        for event in broker_events:
            if event.get("event") == "broker-call":
                seen["broker_methods"][event.get("method")] = seen["broker_methods"].get(event.get("method"), 0) + 1
        seen["refreshes"] = sum(1 for event in broker_events if event.get("event") == "token-request")
        seen["sesame_ms"], seen["refresh_ms"] = sesame_side(broker_events)
    finally:
        program.stop()


desktop = BrokerDesktop(binary, scratch, os.path.join(scratch, "trace.jsonl"))
try:
    measure(desktop)
except StepFailed as failure:
    seen["failed"] = str(failure)
    seen["last_events"] = [" ".join(f"{key}={value}" for key, value in event.items())
                           for event in desktop.app.trace.events()[-25:]]
    print(json.dumps(seen))
    raise
finally:
    desktop.quit()
print(json.dumps(seen))
