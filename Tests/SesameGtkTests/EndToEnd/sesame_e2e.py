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
import time
import urllib.request

import gi

gi.require_version("Atspi", "2.0")
from gi.repository import Atspi, Gio, GLib  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

PASSWORD = "Passw0rd!"
TIMEOUT = 30


class StepFailed(Exception):
    """A step of a flow did not happen in time; the message says which and what was on screen."""


def wait(what, condition, timeout=TIMEOUT, interval=0.1):
    """Polls `condition` until it returns something truthy; that value is returned."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except (GLib.Error, StaleElementReferenceException, NoSuchElementException) as error:
            last_error = error
        time.sleep(interval)
    raise StepFailed(f"waited {timeout} s for {what}" + (f" (last error: {last_error})" if last_error else ""))


def isolate_app_environment(data_home):
    """The app's environment for one run: its own XDG data folder (tokens and web data), the
    accessibility bus given directly, and no session bus, so that its tokens go to files in that
    folder rather than to the test session's keyring, which every run would share."""
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    reply = bus.call_sync("org.a11y.Bus", "/org/a11y/bus", "org.a11y.Bus", "GetAddress", None,
                          GLib.VariantType("(s)"), Gio.DBusCallFlags.NONE, 5000, None)
    os.environ["AT_SPI_BUS_ADDRESS"] = reply.unpack()[0]
    os.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/nonexistent"
    os.environ["XDG_DATA_HOME"] = data_home
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
        table = self.find("table", table_name)
        return [table.get_accessible_at(row, column).get_name() for row in range(table.get_n_rows())]

    def list_items(self, list_name):
        """The texts of a list box's rows (the task list)."""
        listbox = self.find("list box", list_name)
        texts = []
        for index in range(listbox.get_child_count()):
            row = listbox.get_child_at_index(index)
            texts += [self.text(row.get_child_at_index(i)) for i in range(row.get_child_count())]
        return texts

    def scroll_to_end(self, table_name):
        """Drags the table's vertical scroll bar to its end."""
        table = self.find("table", table_name)
        pane = table.get_parent()
        bars = [pane.get_child_at_index(i) for i in range(pane.get_child_count())]
        bar = next(b for b in bars if b.get_role_name() == "scroll bar"
                   and b.get_state_set().contains(Atspi.StateType.VERTICAL))
        bar.set_current_value(bar.get_maximum_value())


class Sesame:
    """One run of the app under WebKitWebDriver."""

    def __init__(self, binary, emulator, trace_path, sample, extra_arguments=()):
        options = webdriver.WebKitGTKOptions()
        options.binary_location = binary
        options.set_capability("browserName", "sesame")
        for argument in ("--automation-mode", f"--emulator={emulator}", f"--trace-events={trace_path}",
                         f"--sample={sample}", *extra_arguments):
            options.add_argument(argument)
        service = webdriver.WebKitGTKService(executable_path="/usr/bin/WebKitWebDriver")
        self.driver = webdriver.WebKitGTK(options=options, service=service)
        self.trace = Trace(trace_path)
        self.emulator = emulator
        try:
            self.ui = Widgets.of_process(trace_path)
            self.trace.wait_for("window-shown")
        except Exception:
            self.quit()
            raise

    def quit(self):
        self.driver.quit()

    # The identity service's pages, by Microsoft's and B2C's element ids.

    def element(self, element_id):
        found = self.driver.find_elements(By.ID, element_id)
        return found[0] if found else None

    def page_with(self, element_id, what, timeout=TIMEOUT):
        return wait(f"{what} (#{element_id}); the view shows {self.where()}", lambda: self.element(element_id), timeout)

    def where(self):
        try:
            return f"{self.driver.current_url.split('?')[0]} '{self.driver.title}'"
        except Exception as error:  # the description of a failure must not fail
            return f"(unknown: {error})"

    @property
    def url(self):
        return self.driver.current_url.split("?")[0]

    def fill(self, element_id, text):
        field = self.element(element_id)
        field.clear()
        field.send_keys(text)

    def submit(self, button_id):
        """Clicks and waits for the next page, or for the app to take the redirect (then True)."""
        button = self.element(button_id)
        mark = self.trace.mark()
        button.click()

        def moved_on():
            if self.trace.find("redirect-intercepted", since=mark):
                return "redirect"
            try:
                button.is_enabled()
                return None
            except StaleElementReferenceException:
                return "page"
        return wait(f"the page after #{button_id}; the view shows {self.where()}", moved_on) == "redirect"

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
        if self.element("idTxtBx_SAOTCC_OTC"):
            seen["sms_page"] = self.element("idDiv_SAOTCC_Description").text
            code = self.driver.find_element(By.CSS_SELECTOR, "#demoCode code").text
            self.fill("idTxtBx_SAOTCC_OTC", code)
            self.submit("idSubmit_SAOTCC_Continue")
        self.page_with("KmsiCheckboxField", "the stay-signed-in page")
        seen["kmsi_page"] = self.url
        if not self.submit("idSIButton9"):
            self.answer_consent(seen, consent)
        return seen

    def answer_consent(self, seen, consent=True):
        self.page_with("permissionList", "the consent page")
        seen["consent"] = [item.text for item in self.driver.find_elements(By.CSS_SELECTOR, "#permissionList li")]
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
