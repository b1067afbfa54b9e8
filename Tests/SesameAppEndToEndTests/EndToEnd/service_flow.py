"""Sesame's account service (org.sesame.Accounts1) from other programs, with the user's say.

    python service_flow.py FLOW SESAME_BINARY EMULATOR_URL SCRATCH_DIR

The app runs on the session bus SESAME_E2E_APP_BUS names (a bus of the test's own) and signs alex
in through its window (WebDriver); the "other programs" are copies of /usr/bin/gdbus at different
paths (the service tells them apart by the executable the bus daemon's pid runs), and the user's
answers are pressed through the accessibility tree. Prints one JSON object: what was seen.
AccountServiceEndToEndTests.swift says what must hold.
"""
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

from sesame_e2e import Sesame, isolate_app_environment, wait

flow, binary, emulator, scratch = sys.argv[1:5]
bus = os.environ["SESAME_E2E_APP_BUS"]
isolate_app_environment(os.path.join(scratch, "data"))
seen = {}
NAME, PATH, INTERFACE = "org.sesame.Sesame", "/org/sesame/Sesame", "org.sesame.Accounts1"


def program(folder, name):
    """A copy of gdbus at scratch/programs/FOLDER/NAME: a program of its own, as the bus sees it."""
    path = os.path.join(scratch, "programs", folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if not os.path.exists(path):
        shutil.copy2("/usr/bin/gdbus", path)
    return path


def call(tool, method, *arguments, wait_for_answer=True):
    """`tool call … METHOD ARGUMENTS` on the app's bus: a process (when not waited for) or
    (exit status, stdout, stderr)."""
    command = [tool, "call", "--session", "--dest", NAME, "--object-path", PATH, "--method", f"{INTERFACE}.{method}",
               "--timeout", "120", *arguments]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus})
    if not wait_for_answer:
        return process
    out, err = process.communicate(timeout=180)
    return process.returncode, out, err


def token_of(output):
    match = re.match(r"\('([^']*)', (?:int64 )?(\d+)\)", output.strip())
    return (match.group(1), int(match.group(2))) if match else (None, None)


def graph_me(token):
    """Graph's /me at the emulator with the token: the status."""
    request = urllib.request.Request(f"{emulator.rstrip('/')}/v1.0/me", headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


class RefreshLock:
    """The directory sample's refresh lock, held by the test as another Sesame process would hold
    it while it refreshes: the app's refresh waits, and every request that comes meanwhile joins it."""

    def __init__(self):
        cache = os.path.join(scratch, "data", "sesame", "com.microsoft.azureactivedirectory.samples.graph.QuickStart.json")
        self.descriptor = os.open(cache + ".refresh.lock", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.descriptor, fcntl.LOCK_EX)

    def release(self):
        fcntl.flock(self.descriptor, fcntl.LOCK_UN)
        os.close(self.descriptor)


def question(app, answered=()):
    """The program the window asks about now (the bar's second line), once it is a new one."""
    def asked():
        labels = app.ui.all("label", "Where the program is")
        texts = [app.ui.text(label) for label in labels]
        return next((text for text in texts if text and text not in answered), None)
    return wait("the window's question about a program", asked)


def question_text(app):
    return app.ui.text(app.ui.find("label", "Program asking for access"))


def answer(app, button):
    app.ui.click(button)


def service(app):
    # Access tokens live 2 minutes here, less than the 5 minutes before expiry at which Sesame
    # refreshes: every request that finds no refresh under way needs one.
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    app.trace.wait_for("token-acquired")
    caller = program("lister", "lister")
    status, out, err = call(caller, "ListAccounts")
    seen["list_status"], seen["list"], seen["list_error"] = status, out, err

    # 50 requests at once from 5 programs nobody decided on: one question per program, pressed
    # "Always" in the window; then every request gets the same token, from one refresh. The
    # refresh lock is held until all 50 have reached the store, so they are all under way at once.
    mark = app.trace.mark()
    lock = RefreshLock()
    tools = [program(f"p{index}", f"tool-{index}") for index in range(1, 6)]
    processes = [call(tool, "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
                 for tool in tools for _ in range(10)]
    asked = []
    for _ in tools:
        origin = question(app, asked)
        asked.append(origin)
        if len(asked) == 1:
            seen["first_question"] = question_text(app)
        answer(app, "Always allow this program")
    wait("the 50 requests at the store", lambda: len(app.trace.find("service-token-request", since=mark)) >= 50)
    lock.release()
    results = [process.communicate(timeout=180) + (process.returncode,) for process in processes]
    seen["asked"] = list(asked)
    seen["concurrent_status"] = sorted({status for _, _, status in results})
    seen["concurrent_errors"] = [err for _, err, status in results if status != 0][:3]
    tokens = [token_of(out)[0] for out, _, _ in results]
    seen["concurrent_distinct_tokens"] = len(set(tokens))
    seen["concurrent_refreshes"] = len(app.trace.find("token-request", since=mark))
    seen["graph_status"] = graph_me(tokens[0]) if tokens[0] else None
    seen["expires_at"] = token_of(results[0][0])[1]

    # A program the user denies gets a D-Bus error and no token.
    denied = program("denied", "denied-tool")
    process = call(denied, "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
    seen["denied_question"] = question(app, asked)
    asked.append(seen["denied_question"])
    answer(app, "Deny this program")
    out, err = process.communicate(timeout=180)
    seen["denied"] = {"status": process.returncode, "out": out, "error": err}
    status, out, err = call(denied, "GetAccessToken", "myGraphService", "", "[]")
    seen["denied_again"] = {"status": status, "out": out, "error": err}

    # Taking the decision back (the account menu's "Programs with access") asks again.
    app.ui.from_menu("Account", f"Take back the decision about {tools[0]}")
    process = call(tools[0], "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
    seen["asked_again"] = question(app, [])
    answer(app, "Allow this program once")
    out, err = process.communicate(timeout=180)
    seen["after_revoke"] = {"status": process.returncode, "token": bool(token_of(out)[0])}

    # The same name at another path is another program: asked about separately.
    impostor = program("elsewhere", "tool-2")
    process = call(impostor, "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
    seen["impostor_question"] = question(app, [seen["asked_again"]])
    answer(app, "Deny this program")
    out, err = process.communicate(timeout=180)
    seen["impostor"] = {"status": process.returncode, "error": err, "out": out}

    # `sesame token` and `sesame accounts` ask the running service (Sesame's own executable is
    # never asked about), with the answers the store would give.
    mark = app.trace.mark()
    command_environment = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus}
    token = subprocess.run([binary, "token", f"--emulator={emulator}", "--account-type", "myGraphService"],
                           capture_output=True, text=True, env=command_environment, timeout=120)
    accounts = subprocess.run([binary, "accounts", f"--emulator={emulator}"],
                              capture_output=True, text=True, env=command_environment, timeout=120)
    seen["sesame_token"] = {"status": token.returncode, "jwt": token.stdout.startswith("eyJ"), "error": token.stderr,
                            "graph": graph_me(token.stdout.strip())}
    seen["sesame_accounts"] = accounts.stdout
    seen["sesame_through_service"] = [e.get("program") for e in app.trace.find("service-token-request", since=mark)]

    # A sign-out through the bus (by a program allowed always) leaves the window's menu at once.
    mark = app.trace.mark()
    status, out, err = call(tools[1], "SignOut", "myGraphService", "")
    seen["sign_out"] = {"status": status, "error": err}
    app.trace.wait_for("signed-out", since=mark)
    app.ui.click("Account", role="toggle button")
    seen["menu_after_sign_out"] = app.ui.text(app.ui.find("label", "Signed-in user"))
    seen["sign_in_offered"] = app.ui.is_visible("push button", "Sign in to this sample")
    status, out, err = call(caller, "ListAccounts")
    seen["list_after_sign_out"] = out
    seen["programs"] = {"tools": tools, "impostor": impostor, "denied": denied}


FLOWS = {"service": service}

app = Sesame(binary, emulator, os.path.join(scratch, "trace-1.jsonl"), "directory")
try:
    FLOWS[flow](app)
finally:
    app.quit()
print(json.dumps(seen))
