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

from sesame_e2e import Sesame, isolate_app_environment, typed_at_terminal, wait

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


def take_back(app, program):
    """The primary menu's Programs with Access: Take back the decision about `program`, then Close."""
    app.ui.from_menu("Main menu", "Programs with Access")
    app.ui.click(f"Take back the decision about {program}")
    app.ui.click("Close Programs with Access")


def question(app, answered=()):
    """The program the window asks about now (the dialog's "Where the program is"), once it is a
    new one."""
    def asked():
        labels = app.ui.all("label", "Where the program is")
        texts = [app.ui.text(label) for label in labels]
        return next((text for text in texts if text and text not in answered), None)
    return wait("the question about a program", asked)


def question_text(app):
    return app.ui.text(app.ui.find("label", "Program asking for access"))


def permissions_text(app):
    return app.ui.text(app.ui.find("label", "Permissions the program would get"))


def answer(app, button):
    """Presses an answer as a user can: once the question's buttons work (after its security delay)."""
    app.ui.click(button)


def outcome(process):
    out, err = process.communicate(timeout=180)
    return {"status": process.returncode, "out": out, "error": err}


def sandboxed(arguments, root_files=(), binds=()):
    """`arguments` run by bwrap in a mount (and user) namespace of their own, as an unprivileged
    program can: a fresh root with the system's /usr and /etc, this /tmp (the bus, the copies),
    `root_files` (path in the sandbox, file) and `binds` (file, path) on top."""
    command = ["bwrap", "--unshare-user", "--die-with-parent", "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
               "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--ro-bind", "/etc", "/etc",
               "--bind", "/tmp", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    if scratch.startswith("/tmp/") is False:
        command += ["--bind", scratch, scratch]
    for inside, source in root_files:
        command += ["--ro-bind", source, inside]
    for source, inside in binds:
        command += ["--ro-bind", source, inside]
    return command + list(arguments)


def call_in_sandbox(tool, method, *arguments, root_files=(), binds=()):
    command = sandboxed([tool, "call", "--session", "--dest", NAME, "--object-path", PATH, "--method", f"{INTERFACE}.{method}",
                         "--timeout", "120", *arguments], root_files=root_files, binds=binds)
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus})


def service(app):
    # Access tokens live 2 minutes here, less than the 5 minutes before expiry at which Sesame
    # refreshes: every request that finds no refresh under way needs one.
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    app.trace.wait_for("token-acquired")
    # A program nobody decided about lists no account: no user name, no tenant.
    lister = program("lister", "lister")
    seen["list_undecided"] = dict(zip(("status", "out", "error"), call(lister, "ListAccounts")))

    # The first request of each of 5 programs asks, one question per program, each answered
    # "Always" once its buttons work; the question lists what the token carries.
    tools = [program(f"p{index}", f"tool-{index}") for index in range(1, 6)]
    asked = []
    first = []
    for tool in tools:
        process = call(tool, "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
        asked.append(question(app, asked))
        if len(asked) == 1:
            seen["first_question"] = question_text(app)
            seen["first_permissions"] = permissions_text(app)
        answer(app, "Always allow this program")
        first.append(outcome(process))
    seen["asked"] = list(asked)
    seen["first_status"] = sorted({result["status"] for result in first})
    seen["list_allowed"] = call(tools[0], "ListAccounts")[1]

    # 50 requests at once from the 5 allowed programs: every request gets the same token, from one
    # refresh. The refresh lock is held until all 50 have reached the store, so they are all under
    # way at once.
    mark = app.trace.mark()
    lock = RefreshLock()
    processes = [call(tool, "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
                 for tool in tools for _ in range(10)]
    wait("the 50 requests at the store", lambda: len(app.trace.find("service-token-request", since=mark)) >= 50)
    lock.release()
    results = [process.communicate(timeout=180) + (process.returncode,) for process in processes]
    seen["concurrent_status"] = sorted({status for _, _, status in results})
    seen["concurrent_errors"] = [err for _, err, status in results if status != 0][:3]
    tokens = [token_of(out)[0] for out, _, _ in results]
    seen["concurrent_distinct_tokens"] = len(set(tokens))
    seen["concurrent_refreshes"] = len(app.trace.find("token-request", since=mark))
    seen["graph_status"] = graph_me(tokens[0]) if tokens[0] else None
    seen["expires_at"] = token_of(results[0][0])[1]

    # A program the user denies gets a D-Bus error that names no account, and no token.
    denied = program("denied", "denied-tool")
    process = call(denied, "GetAccessToken", "myGraphService", "", "[]", wait_for_answer=False)
    seen["denied_question"] = question(app, asked)
    asked.append(seen["denied_question"])
    answer(app, "Deny this program")
    seen["denied"] = outcome(process)
    status, out, err = call(denied, "GetAccessToken", "myGraphService", "", "[]")
    seen["denied_again"] = {"status": status, "out": out, "error": err}

    # A program in a mount namespace of its own, with another program bound over tool-1's path
    # (allowed always): asked about as unverified, without "Always", never given tool-1's token.
    impostor_binary = program("bound", "not-tool-1")
    process = call_in_sandbox(tools[0], "GetAccessToken", "myGraphService", "", "[]", binds=[(impostor_binary, tools[0])])
    seen["bwrap_question"] = question(app, [])
    seen["bwrap_always_offered"] = app.ui.is_visible("push button", "Always allow this program")
    answer(app, "Deny this program")
    seen["bwrap"] = outcome(process)
    # A .flatpak-info of its own making is not believed: no Flatpak app, an unverified program.
    info = os.path.join(scratch, "fake.flatpak-info")
    with open(info, "w") as fake:
        fake.write("[Application]\nname=org.gnome.Evolution\n\n[Instance]\ninstance-id=1234567890\n")
    process = call_in_sandbox(tools[1], "GetAccessToken", "myGraphService", "", "[]", root_files=[("/.flatpak-info", info)])
    seen["flatpak_question"] = question(app, [])
    answer(app, "Deny this program")
    seen["flatpak"] = outcome(process)
    seen["decisions_after_sandboxes"] = len(app.trace.find("access-answer"))

    # Taking the decision back (the primary menu's "Programs with Access") asks again.
    take_back(app, tools[0])
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
    seen["impostor"] = outcome(process)

    # `sesame token` typed at a shell and `sesame accounts` ask the running service (Sesame's own
    # commands, typed by the person, are never asked about), with the answers the store would give.
    mark = app.trace.mark()
    command_environment = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus, "HOME": scratch}
    status, shown = typed_at_terminal(f"{binary} token --emulator={emulator} --account-type myGraphService", command_environment)
    printed = re.search(r"eyJ[\w.-]+", shown)
    token = subprocess.CompletedProcess([], status, printed.group(0) if printed else "", "" if printed else shown[-1000:])
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
    status, out, err = call(tools[1], "ListAccounts")
    seen["list_after_sign_out"] = out
    seen["programs"] = {"tools": tools, "impostor": impostor, "denied": denied, "bound": impostor_binary}


class GitServer:
    """`git http-backend` (git's own smart HTTP server, as CGI) behind a tiny HTTP server that lets a
    request through only when Basic auth's password is a token the emulator's Graph accepts."""

    def __init__(self, root):
        import http.server
        import threading
        self.root = root
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                server.handle(self)

            def do_POST(self):
                server.handle(self)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.refused = 0
        # Every Authorization header sent to it: what crossed the (unencrypted) wire.
        self.authorizations = []
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def authorized(self, header):
        import base64
        if not header or not header.startswith("Basic "):
            return False
        password = base64.b64decode(header[6:]).decode(errors="replace").partition(":")[2]
        return bool(password) and graph_me(password) == 200

    def handle(self, request):
        if request.headers.get("Authorization"):
            self.authorizations.append(request.headers.get("Authorization"))
        if not self.authorized(request.headers.get("Authorization")):
            self.refused += 1
            request.send_response(401)
            request.send_header("WWW-Authenticate", 'Basic realm="sesame-test"')
            request.send_header("Content-Length", "0")
            request.end_headers()
            return
        path, _, query = request.path.partition("?")
        length = int(request.headers.get("Content-Length") or 0)
        body = request.rfile.read(length) if length else b""
        environment = {**os.environ, "GIT_PROJECT_ROOT": self.root, "GIT_HTTP_EXPORT_ALL": "1", "REMOTE_USER": "sesame",
                       "REQUEST_METHOD": request.command, "PATH_INFO": path, "QUERY_STRING": query,
                       "CONTENT_TYPE": request.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(body)),
                       "GATEWAY_INTERFACE": "CGI/1.1", "REMOTE_ADDR": "127.0.0.1"}
        output = subprocess.run(["git", "http-backend"], input=body, capture_output=True, env=environment).stdout
        head, _, content = output.partition(b"\r\n\r\n")
        status, headers = 200, []
        for line in head.decode().split("\r\n"):
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        request.send_response(status)
        for name, value in headers:
            request.send_header(name, value)
        request.send_header("Content-Length", str(len(content)))
        request.end_headers()
        request.wfile.write(content)


def git(arguments, cwd, environment):
    return subprocess.Popen(["git", *arguments], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=environment)


def finished(process):
    out, err = process.communicate(timeout=180)
    return {"status": process.returncode, "error": err[-2000:]}


def git_flow(app):
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    app.trace.wait_for("token-acquired")
    root = os.path.join(scratch, "server")
    os.makedirs(root)
    subprocess.run(["git", "init", "-q", "--bare", "repo.git"], cwd=root, check=True)
    subprocess.run(["git", "config", "http.receivepack", "true"], cwd=os.path.join(root, "repo.git"), check=True)
    server = GitServer(root)
    config = os.path.join(scratch, "config")
    os.makedirs(os.path.join(config, "sesame"))
    # A second server on plain HTTP, which the user listed as a host: an https remote.
    plain = GitServer(root)
    with open(os.path.join(config, "sesame", "git.conf"), "w") as conf:
        conf.write(f"# the test's server, plain http on this computer, opted in\n"
                   f"http://127.0.0.1:{server.port} myGraphService --allow-plain-http\n"
                   f"127.0.0.1:{plain.port} myGraphService\n")
    helper = os.path.join(os.path.dirname(binary), "git-credential-sesame")
    environment = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus, "XDG_CONFIG_HOME": config, "GIT_TERMINAL_PROMPT": "0",
                   "PATH": os.path.dirname(binary) + ":" + os.environ["PATH"], "GIT_CONFIG_NOSYSTEM": "1",
                   "HOME": scratch, "GIT_AUTHOR_NAME": "Alex", "GIT_AUTHOR_EMAIL": "alex@contoso.com",
                   "GIT_COMMITTER_NAME": "Alex", "GIT_COMMITTER_EMAIL": "alex@contoso.com"}
    url = f"http://127.0.0.1:{server.port}/repo.git"
    work = os.path.join(scratch, "work")
    # The first clone: git asks the helper, the helper asks Sesame, Sesame asks the user: Always.
    clone = git(["-c", "credential.helper=sesame", "clone", "-q", url, work], scratch, environment)
    seen["git_question"] = question(app)
    answer(app, "Always allow this program")
    seen["clone"] = finished(clone)
    with open(os.path.join(work, "README"), "w") as readme:
        readme.write("signed in through Sesame\n")
    subprocess.run(["git", "add", "README"], cwd=work, env=environment, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "First"], cwd=work, env=environment, check=True)
    seen["push"] = finished(git(["-c", "credential.helper=sesame", "push", "-q", "origin", "HEAD:main"], work, environment))
    seen["server_log"] = subprocess.run(["git", "log", "--format=%s", "main"], cwd=os.path.join(root, "repo.git"),
                                        capture_output=True, text=True).stdout
    # An http:// remote for a host listed as https (a typed URL, an http:// submodule): the helper,
    # allowed always by now, gives git nothing, so no token crosses the wire unencrypted.
    mark = app.trace.mark()
    seen["plain_http"] = finished(git(["-c", "credential.helper=sesame", "ls-remote", f"http://127.0.0.1:{plain.port}/repo.git"],
                                      scratch, environment))
    seen["plain_http_authorizations"] = list(plain.authorizations)
    seen["plain_http_token_requests"] = len(app.trace.find("service-token-request", since=mark))
    # Taken back: git's next push asks again; denied, git fails as for any refused password.
    take_back(app, helper)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "Second"], cwd=work, env=environment, check=True)
    push = git(["-c", "credential.helper=sesame", "push", "-q", "origin", "HEAD:main"], work, environment)
    seen["git_asked_again"] = question(app, [])
    answer(app, "Deny this program")
    seen["push_after_revoke"] = finished(push)
    seen["helper"] = helper


def mail_command_flow(app):
    """`sesame token` as a mail program's password command: the program behind it is asked about
    (its own copy of /usr/bin/timeout, which runs `sh -c "sesame token …"` and waits, as mbsync
    runs its PassCmd); the same command typed at an interactive shell is the person's own."""
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    app.trace.wait_for("token-acquired")
    client = os.path.join(scratch, "programs", "mail", "mail-client")
    os.makedirs(os.path.dirname(client), exist_ok=True)
    shutil.copy2("/usr/bin/timeout", client)
    environment = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": bus, "HOME": scratch}
    command = f"{binary} token --account-type myGraphService"
    first = subprocess.Popen([client, "120", "sh", "-c", command], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=environment)
    seen["mail_question"] = question(app)
    seen["mail_question_text"] = question_text(app)
    answer(app, "Always allow this program")
    out, err = first.communicate(timeout=180)
    seen["mail_first"] = {"status": first.returncode, "graph": graph_me(out.strip()), "error": err[-1000:]}
    mark = app.trace.mark()
    again = subprocess.run([client, "120", "sh", "-c", command], capture_output=True, text=True, env=environment, timeout=120)
    seen["mail_again"] = {"status": again.returncode, "graph": graph_me(again.stdout.strip()),
                          "questions": len(app.trace.find("access-question", since=mark))}
    # Typed by a person at a terminal: theirs, asked nothing.
    mark = app.trace.mark()
    status, shown = typed_at_terminal(command, environment)
    printed = re.search(r"eyJ[\w.-]+", shown)
    seen["typed"] = {"status": status, "graph": graph_me(printed.group(0) if printed else ""),
                     "questions": len(app.trace.find("access-question", since=mark)), "error": "" if printed else shown[-500:]}
    # The same command fed to a shell through a pipe (`echo … | bash`) is no person typing, even
    # with -i: the program feeding it — this flow, python — is asked about, and denied.
    mark = app.trace.mark()
    piped = subprocess.Popen(["bash", "-i"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=environment)
    piped.stdin.write(command + "\n")
    piped.stdin.close()
    seen["piped_question"] = question(app)
    seen["piped_question_text"] = question_text(app)
    answer(app, "Deny this program")
    out = piped.stdout.read()
    err = piped.stderr.read()
    piped.wait(timeout=120)
    seen["piped"] = {"token": "eyJ" in out, "questions": len(app.trace.find("access-question", since=mark)), "error": err[-1000:]}
    seen["client"] = client


FLOWS = {"service": service, "git": git_flow, "mail-command": mail_command_flow}

app = Sesame(binary, emulator, os.path.join(scratch, "trace-1.jsonl"), "directory")
try:
    FLOWS[flow](app)
finally:
    app.quit()
print(json.dumps(seen))
