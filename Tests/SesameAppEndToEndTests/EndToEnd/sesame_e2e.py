"""Drive the real Sesame window from outside, as a user and their CI would.

- The identity service's pages: WebDriver. WebKitWebDriver (Debian's webkit2gtk-driver) starts
  `sesame --automation-mode` as its browser; the session's browsing context is the app's sign-in
  view, and Selenium fills Microsoft's pages by their element ids.
- The app's own GTK widgets: the accessibility tree (AT-SPI), the way a screen reader or dogtail
  sees them. Buttons are pressed with their "click" action, entries typed into through their
  editable text, the people list read as a table.
- What happened underneath: the app's `--trace-events` JSON lines.

Every wait says what it waited for, so that a failing flow explains itself.
"""
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, Gio, GLib  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import (  # noqa: E402
    NoSuchElementException, NoSuchFrameException, NoSuchWindowException, StaleElementReferenceException,
    WebDriverException)
from selenium.webdriver.common.by import By  # noqa: E402

PASSWORD = "Passw0rd!"
# How long a step waits for what it awaits: the awaited thing ends the wait, so this only guards
# against one that would hang — generous for a machine busy with more than `make test`.
TIMEOUT = 120


class StepFailed(Exception):
    """A step of a flow did not happen in time; the message says which and what was on screen."""


# What WebDriver answers while the page a command named is being replaced by the next one: the
# element belongs to a document that went away (stale), the script that looked for it was cut
# short by the unload (WebKit says "Callback was not called before the unload event" as "no such
# frame", "no such window" or "javascript error", depending on its version), or the new document
# has not parsed the element yet. None of them means a step failed; each means "not yet". The
# accessibility tree answers GLib errors while a widget is being replaced.
TRANSIENT_ERRORS = (StaleElementReferenceException, NoSuchFrameException, NoSuchWindowException, NoSuchElementException,
                    GLib.Error)
TRANSIENT_MESSAGES = ("unload event", "document unloaded", "navigation", "not interactable")


def is_transient(error):
    """Whether `error` is a page or widget being replaced under a command (see TRANSIENT_ERRORS)."""
    if isinstance(error, TRANSIENT_ERRORS):
        return True
    return isinstance(error, WebDriverException) and any(text in (error.msg or "") for text in TRANSIENT_MESSAGES)


def wait(what, condition, timeout=TIMEOUT, interval=0.1, recover=None):
    """Polls `condition` until it returns something truthy; that value is returned. A transient
    answer (`is_transient`) counts as "not yet" (then `recover` runs, if given); any other error
    fails at once. After `timeout`, StepFailed says what was awaited and the last transient error."""
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
            break
        time.sleep(interval)  # between two looks: what is awaited ends the wait, the deadline only bounds a hang
    detail = f" (last error: {type(last_error).__name__}: {str(last_error).strip()})" if last_error else ""
    raise StepFailed(f"waited {timeout} s for {what}{detail}")


def read(what, reader, timeout=TIMEOUT):
    """`reader()`'s answer, whatever it is (an empty list too), read again while it is transient."""
    return wait(what, lambda: (reader(),), timeout)[0]


def isolate_app_environment(data_home):
    """The app's environment for one run: its own XDG data folder (tokens and web data), the
    accessibility bus given directly, and no session bus, so that its tokens go to files in that
    folder rather than to the test session's keyring, which every run would share — or the bus
    SESAME_E2E_APP_BUS names (a desktop session of a test's own: GNOME's proxy settings)."""
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    reply = bus.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                          GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 5000, None)
    os.environ["AT_SPI_BUS_ADDRESS"] = reply.unpack()[0]
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = os.environ.get("SESAME_E2E_APP_BUS", "unix:path=/nonexistent")
    os.environ["XDG_DATA_HOME"] = data_home
    # The window's size and inspector are kept per run, beside its data.
    os.environ["XDG_STATE_HOME"] = os.path.join(os.path.dirname(data_home), "state")
    os.environ["WEBKIT_DISABLE_COMPOSITING_MODE"] = "1"


class Trace:
    """The app's `--trace-events` file: one JSON object per line (`event`, then its fields)."""

    def __init__(self, path):
        self.path = path

    def events(self):
        try:
            with open(self.path, encoding="utf-8") as lines:
                return [json.loads(line) for line in lines if line.strip()]
        except FileNotFoundError:
            return []

    def mark(self):
        """A position: `since=` counts only what happens after it."""
        return len(self.events())

    def find(self, event, since=0, **fields):
        return [e for e in self.events()[since:]
                if e.get("event") == event and all(str(e.get(k)) == str(v) for k, v in fields.items())]

    def wait_for(self, event, since=0, timeout=TIMEOUT, **fields):
        description = event + "".join(f" {k}={v}" for k, v in fields.items())
        return wait(f"the trace event '{description}'", lambda: self.find(event, since, **fields), timeout)[-1]


class Widgets:
    """The app's accessibility tree."""

    # Where searching stops: web content (WebDriver reads that) and tables (read by row).
    OPAQUE = {"document web", "table", "tree table"}

    def __init__(self, application):
        self.application = application

    @staticmethod
    def of_process(marker):
        """The application whose command line contains `marker` (this run's trace path)."""
        def find():
            desktop = Atspi.get_desktop(0)
            for index in range(desktop.get_child_count()):
                application = desktop.get_child_at_index(index)
                if application is None:
                    continue
                try:
                    with open(f"/proc/{application.get_process_id()}/cmdline", "rb") as cmdline:
                        if marker.encode() in cmdline.read():
                            return application
                except (OSError, GLib.Error):
                    continue
            return None
        return Widgets(wait("the app in the accessibility tree", find))

    def all(self, role, name=None, showing=True):
        found = []

        def visit(node, depth):
            if depth > 40:
                return
            try:
                node_role, node_name = node.get_role_name(), node.get_name()
            except GLib.Error:
                return
            if node_role == role and (name is None or node_name == name) and (not showing or self.is_showing(node)):
                found.append(node)
            if node_role in self.OPAQUE:
                return
            for index in range(node.get_child_count()):
                child = node.get_child_at_index(index)
                if child is not None:
                    visit(child, depth + 1)

        visit(self.application, 0)
        return found

    def find(self, role, name, timeout=TIMEOUT):
        return wait(f"a visible {role} named '{name}'", lambda: next(iter(self.all(role, name)), None), timeout)

    @staticmethod
    def is_showing(node):
        return node.get_state_set().contains(Atspi.StateType.SHOWING)

    def is_visible(self, role, name):
        return bool(self.all(role, name))

    def click(self, name, role="push button"):
        """Presses a button (or tab) by its accessible name, with its first action ("click")."""
        widget = self.find(role, name)
        wait(f"'{name}' to be sensitive", lambda: widget.get_state_set().contains(Atspi.StateType.SENSITIVE))
        widget.do_action(0)

    def from_menu(self, menu, name):
        """Opens a menu button (the header's "Account") and presses one of its buttons."""
        self.click(menu, role="toggle button")
        self.click(name)

    def type(self, name, text):
        """Replaces an entry's text, as typing it would."""
        entry = self.find("text", name)
        entry.set_text_contents(text)

    @staticmethod
    def text(node):
        return node.get_text(0, node.get_character_count())

    def label_texts(self):
        return [self.text(label) for label in self.all("label")]

    def rows(self, table_name, column=0):
        """The cell texts of one column of a table (the people list)."""
        def cells():
            table = self.find("table", table_name)
            return [table.get_accessible_at(row, column).get_name() for row in range(table.get_n_rows())]
        return read(f"the rows of the table '{table_name}'", cells)

    def list_items(self, list_name):
        """The texts of a list box's rows (the task list)."""
        def texts():
            listbox = self.find("list box", list_name)
            found = []
            for index in range(listbox.get_child_count()):
                row = listbox.get_child_at_index(index)
                cells = [row.get_child_at_index(i) for i in range(row.get_child_count())] if row else []
                found += [self.text(cell) for cell in cells if cell is not None]
            return found
        return read(f"the rows of the list '{list_name}'", texts)

    def scroll_to_end(self, table_name):
        """Drags the table's vertical scroll bar to its end."""
        table = self.find("table", table_name)
        pane = table.get_parent()
        bars = [pane.get_child_at_index(i) for i in range(pane.get_child_count())]
        bar = next(b for b in bars if b.get_role_name() == "scroll bar"
                   and b.get_state_set().contains(Atspi.StateType.VERTICAL))
        bar.set_current_value(bar.get_maximum_value())


def app_process(driver, marker):
    """The app's process id: WebKitWebDriver's child whose command line names `marker` (this run's
    trace path), or None."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if parent == driver and marker.encode() in arguments:
            return int(entry)
    return None


def runs(pid, marker):
    """Whether process `pid` is still the app whose command line names `marker` (a process that
    has ended, a zombie included, has no command line; a reused id names another)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return marker.encode() in cmdline.read().split(b"\0")
    except OSError:
        return False


class Sesame:
    """One run of the app under WebKitWebDriver."""

    def __init__(self, binary, emulator, trace_path, sample, extra_arguments=()):
        """`emulator`: the identity emulator the settings are pointed at; None for settings that
        name another provider's URLs throughout."""
        options = webdriver.WebKitGTKOptions()
        options.binary_location = binary
        options.set_capability("browserName", "sesame")
        pointed = [f"--emulator={emulator}"] if emulator is not None else []
        for argument in ("--automation-mode", *pointed, f"--trace-events={trace_path}",
                         f"--sample={sample}", *extra_arguments):
            options.add_argument(argument)
        service = webdriver.WebKitGTKService(executable_path="/usr/bin/WebKitWebDriver")
        self.driver = webdriver.WebKitGTK(options=options, service=service)
        self.trace = Trace(trace_path)
        self.marker = f"--trace-events={trace_path}"
        self.process = app_process(self.driver.service.process.pid, self.marker)
        self.emulator = emulator
        try:
            self.ui = Widgets.of_process(trace_path)
            self.trace.wait_for("window-shown")
        except Exception:
            self.quit()
            raise

    def quit(self):
        """Ends the session, and the app with it. WebKitWebDriver kills the app it started once the
        session is deleted, but Selenium stops WebKitWebDriver as soon as the deletion is answered,
        and on a busy machine that came first: the app ran on with no driver, its parent 1, still
        the account service on its bus (seen in CI). An app left so is ended as a desktop ends a
        program, with SIGTERM, and its end is waited for."""
        try:
            self.driver.quit()
        finally:
            if self.is_running():
                os.kill(self.process, signal.SIGTERM)
                wait("the app WebDriver left running to end on SIGTERM", lambda: not self.is_running())

    def is_running(self):
        """Whether the app this run started still runs."""
        return self.process is not None and runs(self.process, self.marker)

    # The identity service's pages, by Microsoft's and B2C's element ids. Every read goes through
    # `wait`, so that a page being replaced under a command is "not yet", never a failure.

    def settle(self):
        """After a transient error: address the top-level document again (a command cut short by
        an unload may leave the session pointing at the frame that went away)."""
        self.driver.switch_to.default_content()

    def wait(self, what, condition, timeout=TIMEOUT):
        return wait(f"{what}; the view shows {self.where()}", condition, timeout, recover=self.settle)

    def element(self, element_id):
        """The element with this id on the current page, or None (also while the page changes)."""
        try:
            found = self.driver.find_elements(By.ID, element_id)
            return found[0] if found and found[0].is_displayed() else None
        except Exception as error:  # noqa: BLE001
            if is_transient(error):
                return None
            raise

    def page_with(self, element_id, what, timeout=TIMEOUT):
        return self.wait(f"{what} (#{element_id})", lambda: self.element(element_id), timeout)

    def next_page(self, pages, what):
        """Waits for whichever of `pages` (name → element id) comes next; returns its name."""
        return self.wait(what, lambda: next((name for name, element_id in pages.items() if self.element(element_id)), None))

    def report_where_it_stood(self, scratch):
        """After a step waited in vain, on stderr: the view's page, the app's last trace events
        (the trace is redacted) and its threads' stacks (in a file under `scratch`)."""
        print(f"  the view shows {self.where()}", file=sys.stderr)
        for event in [e for e in self.trace.events() if e.get("event") != "main-loop-stall"][-25:]:
            print("  trace: " + " ".join(f"{key}={value}" for key, value in event.items()), file=sys.stderr)
        print_app_threads(self.trace.path, scratch)

    def where(self):
        try:
            return f"{self.driver.current_url.split('?')[0]} '{self.driver.title}'"
        except Exception as error:  # noqa: BLE001 — the description of a failure must not fail
            return f"(unknown: {error})"

    @property
    def url(self):
        return self.driver.current_url.split("?")[0]

    def text_of(self, element_id, what):
        """The text of an element, read once it is there."""
        return self.wait(what, lambda: (lambda e: e.text if e else None)(self.element(element_id)))

    def fill(self, element_id, text):
        """Types into a field as a user does; done again from a clear field if the page was still
        being replaced under the first try."""
        def typed():
            field = self.element(element_id)
            if field is None:
                return False
            field.clear()
            field.send_keys(text)
            return field.get_property("value") == text
        self.wait(f"#{element_id} to take the typed text", typed)

    def submit(self, button_id):
        """Clicks and waits for the next page, or for the app to take the redirect (then True).

        The page has moved on once the document that had the button is gone: the page is marked
        before the click, and the mark is looked for afterwards. The redirect is intercepted, never
        loaded, so then the page stays and the trace says so."""
        button = self.page_with(button_id, f"the button #{button_id}")
        mark = self.trace.mark()
        page = self.wait("the page to take a mark", lambda: self.driver.execute_script(
            "window.__sesameStep = (window.__sesameStep || 0) + 1; return document.URL;"))
        try:
            button.click()
        except Exception as error:  # noqa: BLE001
            # The click's own navigation replaced the page before WebDriver answered: it was clicked.
            if not is_transient(error):
                raise

        def moved_on():
            if self.trace.find("redirect-intercepted", since=mark):
                return "redirect"
            # Still the old document while its mark is there; a new document has none.
            return None if self.driver.execute_script("return window.__sesameStep === undefined ? null : 1;") else "page"
        return self.wait(f"the page after #{button_id} (on {page.split('?')[0]})", moved_on) == "redirect"

    # The keyboard alone: keys go to whatever has the focus, as a person types.

    def focused(self, element_id, what):
        """Waits until the page's focused element is `element_id`; returns it."""
        def focus():
            element = self.driver.switch_to.active_element
            return element if element.get_attribute("id") == element_id else None
        return self.wait(f"{what} (focus on #{element_id}; focus is on #{self.focus_id()})", focus)

    def focus_id(self):
        try:
            return self.driver.switch_to.active_element.get_attribute("id")
        except Exception as error:  # noqa: BLE001 — the description of a failure must not fail
            return f"(unknown: {type(error).__name__})"

    def type_keys(self, *keys):
        """Types into the focused element, without moving the focus first."""
        self.driver.switch_to.active_element.send_keys(*keys)

    def press(self, *keys):
        """Types keys that should leave the page (Enter, Escape) and waits for the next page, or for
        the app to take the redirect (then True)."""
        mark = self.trace.mark()
        self.wait("the page to take a mark", lambda: self.driver.execute_script(
            "window.__sesameStep = (window.__sesameStep || 0) + 1; return document.URL;"))
        try:
            self.type_keys(*keys)
        except Exception as error:  # noqa: BLE001 — the keys' own navigation replaced the page
            if not is_transient(error):
                raise

        def moved_on():
            if self.trace.find("redirect-intercepted", since=mark):
                return "redirect"
            return None if self.driver.execute_script("return window.__sesameStep === undefined ? null : 1;") else "page"
        return self.wait(f"the page after pressing {keys!r}", moved_on) == "redirect"

    def sign_in_entra(self, user, password=PASSWORD, consent=True, seen=None):
        """Microsoft's pages: user name, password, the SMS code (demo mode shows it on the page),
        stay signed in, consent. `consent=False` declines it. Returns what it saw."""
        seen = {} if seen is None else seen
        self.page_with("i0116", "the user name page")
        seen.setdefault("first_page", self.url)
        seen.setdefault("title", self.driver.title)
        self.fill("i0116", user)
        self.submit("idSIButton9")
        self.page_with("i0118", "the password page")
        self.fill("i0118", password)
        self.submit("idSIButton9")
        if self.next_page({"sms": "idTxtBx_SAOTCC_OTC", "kmsi": "KmsiCheckboxField"},
                          "the SMS code page or the stay-signed-in page") == "sms":
            seen["sms_page"] = self.text_of("idDiv_SAOTCC_Description", "the SMS page's description")
            self.fill("idTxtBx_SAOTCC_OTC", self.demo_code())
            self.submit("idSubmit_SAOTCC_Continue")
        self.page_with("KmsiCheckboxField", "the stay-signed-in page")
        seen["kmsi_page"] = self.url
        if not self.submit("idSIButton9"):
            self.answer_consent(seen, consent)
        return seen

    def demo_code(self):
        """The one-time code (SMS or e-mail) that demo mode shows on the page."""
        return self.text_of("demoCode", "the one-time code on the page").split()[-1]

    def answer_consent(self, seen, consent=True):
        self.page_with("permissionList", "the consent page")
        seen["consent"] = self.wait("the requested permissions", lambda: [
            item.text for item in self.driver.find_elements(By.CSS_SELECTOR, "#permissionList li")])
        self.submit("idSIButton9" if consent else "idBtn_Back")

    def sign_in_b2c(self, email, password=PASSWORD):
        self.page_with("signInName", "the B2C sign-in page")
        self.fill("signInName", email)
        self.fill("password", password)
        self.submit("next")

    # The emulator's control endpoint (what an administrator does in the Entra admin center).

    def revoke_sign_in_sessions(self, user):
        request = urllib.request.Request(f"{self.emulator.rstrip('/')}/.emulator/users/{user}/revokeSignInSessions", method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status


# Processes, their descriptors, and a person at a terminal.

def processes_with(marker):
    """The processes whose command line holds `marker` (a trace path names one Sesame run)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
        except OSError:
            continue
        if any(marker.encode() in argument for argument in arguments):
            found.append(int(entry))
    return found


def descendants(pid):
    """Every process below `pid` (children, their children, …)."""
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", encoding="utf-8") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, queue = [], list(children.get(pid, []))
    while queue:
        child = queue.pop()
        found.append(child)
        queue.extend(children.get(child, []))
    return found


def descriptors(pid):
    """{fd: what it leads to} of a process: `socket:[N]`, `pipe:[N]` or a path."""
    found = {}
    try:
        for entry in os.listdir(f"/proc/{pid}/fd"):
            try:
                found[int(entry)] = os.readlink(f"/proc/{pid}/fd/{entry}")
            except OSError:
                pass
    except OSError:
        pass
    return found


def shared_descriptors(owner, child, private_folders=()):
    """What `child` holds of `owner`'s, besides the standard streams every child inherits: a
    socket or pipe that is the very one `owner` holds, or a file in one of `private_folders`
    (where Sesame keeps its sign-ins, decisions and traces) that `owner` holds open too. Each as
    "fd → target (comm)"."""
    held = set(descriptors(owner).values())
    mine = {target for target in held
            if target.startswith(("socket:", "pipe:"))
            or any(target.startswith(folder.rstrip("/") + "/") for folder in private_folders)}
    try:
        with open(f"/proc/{child}/comm", encoding="utf-8") as comm:
            name = comm.read().strip()
    except OSError:
        return []
    shared = []
    for fd, target in sorted(descriptors(child).items()):
        if fd <= 2:
            continue
        if target in mine:
            shared.append(f"{fd} → {target} ({name})")
    return shared


def inheritable_descriptors(pid, private_folders=()):
    """The sockets, pipes and files in `private_folders` that process `pid` holds above the
    standard streams without close-on-exec (O_CLOEXEC, 02000000 in /proc/PID/fdinfo's flags):
    what a program it starts would inherit. Each as "fd → target"."""
    found = []
    for fd, target in sorted(descriptors(pid).items()):
        if fd <= 2 or not (target.startswith(("socket:", "pipe:"))
                           or any(target.startswith(folder.rstrip("/") + "/") for folder in private_folders)):
            continue
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}", encoding="utf-8") as info:
                flags = next((int(line.split()[1], 8) for line in info if line.startswith("flags:")), 0)
        except (OSError, ValueError):
            continue
        if not flags & 0o2000000:
            found.append(f"{fd} → {target}")
    return found


def typed_at_terminal(command, environment, timeout=120):
    """`command` typed into an interactive bash on a pseudo-terminal of its own, as a person at a
    terminal window types it; returns (exit status of the shell, everything the terminal showed)."""
    import pty
    import select
    import subprocess
    leader, follower = pty.openpty()
    shell = subprocess.Popen(["bash", "--norc", "--noprofile", "-i"], stdin=follower, stdout=follower, stderr=follower,
                             env=environment, start_new_session=True, close_fds=True)
    os.close(follower)
    os.write(leader, (command + "\nexit\n").encode())
    shown = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
        elif shell.poll() is not None:
            break
    os.close(leader)
    status = shell.wait(timeout=10)
    return status, shown.decode(errors="replace").replace("\r", "")


def print_app_threads(trace_path, scratch):
    """Each thread's stack of the app still running (the one writing `trace_path`), function
    names only (no arguments, no memory): where a flow that waited in vain left it."""
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                if f"--trace-events={trace_path}".encode() not in cmdline.read().split(b"\0"):
                    continue
        except (OSError, ValueError):
            continue
        try:
            stacks = subprocess.run(
                ["gdb", "-p", entry, "-batch", "-nx", "-ex", "set print frame-arguments none",
                 "-ex", "set print entry-values no", "-ex", "thread apply all bt 25"],
                capture_output=True, text=True, timeout=120).stdout
        except (OSError, subprocess.TimeoutExpired) as error:
            stacks = f"(no stacks: {error})"
        kept = os.path.join(os.environ.get("SESAME_E2E_STACKS_DIR", scratch), f"stacks-{entry}.txt")
        with open(kept, "w", encoding="utf-8") as out:
            out.write(stacks)
        # The main thread's (GTK's loop) first: the rest are in the file.
        print(f"  stacks of the app (pid {entry}) in {kept}; its main thread:", file=sys.stderr)
        main = stacks.split("\nThread ")[-1] if "\nThread " in stacks else stacks
        for line in main.splitlines()[:12]:
            print("  stack: " + line[:160], file=sys.stderr)
