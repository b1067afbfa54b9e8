"""A whole sign-in through the installed app, inside the clean root of `make test-package`.

    python3 sign_in.py SCRATCH_DIR

Starts a virtual display (Xvfb) and the installed `/usr/bin/sesame --demo --automation-mode`
under WebKitWebDriver — the demo a person who installed the package can try with no cloud: the
app starts the installed `identity-emulator` itself; signs alex in on the emulator's pages (user
name, password, stay signed in, consent); waits for the app's `token-acquired` trace event; then
asks `sesame accounts`, which must list alex, and checks that the emulator ended with the app. Prints one line per step; exits 1 with the step
that did not happen. Only Debian's packages: python3-selenium, xvfb, webkit2gtk-driver — no AT-SPI
(the trace says what the app did), no source tree.

The waiting is sesame_e2e.py's (Tests/SesameAppEndToEndTests/EndToEnd), cut down: what WebDriver
answers while a page is being replaced means "not yet", never a failure; every wait has a
deadline and says what it waited for.
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import (NoSuchElementException, NoSuchFrameException, NoSuchWindowException,
                                        StaleElementReferenceException, WebDriverException)
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.command import Command

USER = "alex@contoso.onmicrosoft.com"
PASSWORD = "Passw0rd!"
TIMEOUT = 60
TRANSIENT_ERRORS = (StaleElementReferenceException, NoSuchFrameException, NoSuchWindowException, NoSuchElementException)
TRANSIENT_MESSAGES = ("unload event", "document unloaded", "navigation", "not interactable")


class StepFailed(Exception):
    """A step did not happen before its deadline; the message says which."""


def is_transient(error):
    if isinstance(error, TRANSIENT_ERRORS):
        return True
    return isinstance(error, WebDriverException) and any(text in (error.msg or "") for text in TRANSIENT_MESSAGES)


def wait(what, condition, timeout=TIMEOUT, recover=None):
    """Polls `condition` until it answers something truthy (returned); a transient WebDriver
    error is "not yet"; after `timeout` seconds, StepFailed names what was awaited."""
    deadline = time.monotonic() + timeout
    last_error = None
    while True:
        try:
            value = condition()
            if value:
                return value
        except Exception as error:  # noqa: BLE001 — sorted by is_transient
            if not is_transient(error):
                raise
            last_error = error
            if recover is not None:
                try:
                    recover()
                except Exception as recovery_error:  # noqa: BLE001
                    if not is_transient(recovery_error):
                        raise
        if time.monotonic() >= deadline:
            detail = f" (last error: {type(last_error).__name__}: {str(last_error).strip()})" if last_error else ""
            raise StepFailed(f"waited {timeout} s for {what}{detail}")
        time.sleep(0.1)


def step(text):
    print(f"sign-in: {text}", flush=True)


class Trace:
    """The app's `--trace-events` file: one JSON object per line."""

    def __init__(self, path):
        self.path = path

    def events(self):
        try:
            with open(self.path, encoding="utf-8") as lines:
                return [json.loads(line) for line in lines if line.strip()]
        except FileNotFoundError:
            return []

    def find(self, event, since=0):
        return [e for e in self.events()[since:] if e.get("event") == event]


class App:
    """The installed app under WebKitWebDriver; its browsing context is the sign-in view."""

    def __init__(self, trace_path):
        options = webdriver.WebKitGTKOptions()
        options.binary_location = "/usr/bin/sesame"
        options.set_capability("browserName", "sesame")
        for argument in ("--automation-mode", "--demo", f"--trace-events={trace_path}", "--sample=directory"):
            options.add_argument(argument)
        # Debian 12's Selenium (4.8) takes the driver's path itself, not a Service.
        self.driver = webdriver.WebKitGTK(executable_path="/usr/bin/WebKitWebDriver", options=options,
                                          service_log_path=os.path.join(os.path.dirname(trace_path), "webdriver.log"))
        self.trace = Trace(trace_path)

    def quit(self):
        """Ends the session, then the driver and the app it started, by their process ids.
        WebKitWebDriver does not always end on SIGTERM when its parent is no terminal, and the
        session may have no window left to close (the sign-in view goes once the sign-in ends)."""
        driver = self.driver.service.process
        app_pids = children(driver.pid)
        try:
            self.driver.execute(Command.QUIT)
        except WebDriverException as error:
            step(f"ending the WebDriver session: {type(error).__name__} (the app is ended by its pid)")
        finally:
            driver.kill()
            driver.wait()
            for pid in app_pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass

    def where(self):
        try:
            return f"{self.driver.current_url.split('?')[0]} '{self.driver.title}'"
        except Exception as error:  # noqa: BLE001 — describing a failure must not fail
            return f"(unknown: {error})"

    def wait(self, what, condition):
        return wait(f"{what}; the view shows {self.where()}", condition,
                    recover=self.driver.switch_to.default_content)

    def element(self, element_id):
        found = self.driver.find_elements(By.ID, element_id)
        return found[0] if found and found[0].is_displayed() else None

    def page_with(self, element_id, what):
        self.wait(f"{what} (#{element_id})", lambda: self.element(element_id))
        step(f"{what}: {self.where()}")

    def fill(self, element_id, text):
        def typed():
            field = self.element(element_id)
            if field is None:
                return False
            field.clear()
            field.send_keys(text)
            return field.get_property("value") == text
        self.wait(f"#{element_id} to take the typed text", typed)

    def submit(self, button_id):
        """Clicks; waits for a new document (the old one carried a mark) or for the app to
        intercept the redirect (then True)."""
        button = self.wait(f"the button #{button_id}", lambda: self.element(button_id))
        mark = len(self.trace.events())
        self.wait("the page to take a mark", lambda: self.driver.execute_script(
            "window.__sesameStep = (window.__sesameStep || 0) + 1; return document.URL;"))
        try:
            button.click()
        except Exception as error:  # noqa: BLE001 — the click's own navigation answered first
            if not is_transient(error):
                raise

        def moved_on():
            if self.trace.find("redirect-intercepted", since=mark):
                return "redirect"
            return None if self.driver.execute_script("return window.__sesameStep === undefined ? null : 1;") else "page"
        return self.wait(f"the page after #{button_id}", moved_on) == "redirect"


def children(pid):
    """The processes `pid` started (WebKitWebDriver's: the app)."""
    found = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listed:
            found += [int(child) for child in listed.read().split()]
    return found


def demo_base(trace):
    """The demo emulator's base URL, from the first sign-in page the app loaded."""
    loaded = wait("the trace event 'page-loaded'", lambda: trace.find("page-loaded"))[0]
    parts = urllib.parse.urlsplit(loaded.get("url", ""))
    return f"{parts.scheme}://{parts.netloc}"


def answers(base):
    """Whether something answers HTTP at base."""
    try:
        urllib.request.urlopen(base + "/common/v2.0/.well-known/openid-configuration", timeout=5).close()
        return True
    except OSError:
        return False


def start_display():
    """Xvfb on a display number it picks itself (-displayfd)."""
    read_end, write_end = os.pipe()
    display = subprocess.Popen(["Xvfb", "-displayfd", str(write_end), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                               pass_fds=(write_end,), stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as answer:
        number = answer.readline().strip()
    if not number:
        raise StepFailed("Xvfb did not say which display it took")
    os.environ["DISPLAY"] = f":{number}"
    return display


def main():
    scratch = sys.argv[1]
    os.environ["XDG_DATA_HOME"] = os.path.join(scratch, "data")
    os.environ["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"
    os.environ["NO_AT_BRIDGE"] = "1"
    trace_path = os.path.join(scratch, "trace.jsonl")
    started = []
    app = None
    try:
        started.append(start_display())
        step(f"Xvfb on {os.environ['DISPLAY']}")
        app = App(trace_path)
        step("WebKitWebDriver started /usr/bin/sesame --demo --automation-mode")
        url = demo_base(app.trace)
        step(f"sesame --demo started the installed emulator at {url}")
        app.page_with("i0116", "the user name page")
        app.fill("i0116", USER)
        app.submit("idSIButton9")
        app.page_with("i0118", "the password page")
        app.fill("i0118", PASSWORD)
        app.submit("idSIButton9")
        app.page_with("KmsiCheckboxField", "the stay-signed-in page")
        if not app.submit("idSIButton9"):
            app.page_with("permissionList", "the consent page")
            app.submit("idSIButton9")
        token = wait("the trace event 'token-acquired'", lambda: app.trace.find("token-acquired"))[-1]
        step(f"token-acquired for {token.get('accountType')}")
        rows = wait("the trace event 'list-rendered'", lambda: app.trace.find("list-rendered"))[-1]
        if int(rows.get("rows") or 0) == 0:
            raise StepFailed(f"the directory shows no one after the sign-in: {rows}")
        step(f"the directory shows {rows.get('rows')} people")
        finished, app = app, None
        finished.quit()
        wait("the demo's emulator to end with the app", lambda: not answers(url), timeout=15)
        step("the demo's emulator ended with the app")
        accounts = subprocess.run(["sesame", "accounts", f"--emulator={url}"], capture_output=True, text=True, check=True).stdout
        step("sesame accounts:\n" + accounts.rstrip())
        if USER not in accounts:
            raise StepFailed(f"sesame accounts does not list {USER}")
        print("SIGN-IN-OK", flush=True)
    except StepFailed as failure:
        print(f"SIGN-IN-FAILED: {failure}", flush=True)
        return 1
    finally:
        if app is not None:
            finished, app = app, None
            finished.quit()
        for process in reversed(started):
            process.kill()
            process.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
