"""Alex signs in to the Directory through the system browser, and the desktop's default browser
(this test's XDG folders register default_browser.py, WebKitGTK's MiniBrowser under WebDriver, for
http and https) gets the sign-in. How it gets there is the MODE:

- `setting`: the app runs with `--sign-in-with=browser`;
- `button`: the sign-in starts in the window's own view, and the user presses "Continue in your
  browser" once its page is there.

    python system_browser_flow.py MODE SESAME_BINARY EMULATOR_URL SCRATCH_DIR

Prints one JSON object: what the window and the browser showed. The app's trace is in
SCRATCH_DIR/trace-1.jsonl.
"""
import json
import os
import signal
import subprocess
import sys

from sesame_e2e import Trace, Widgets, isolate_app_environment, wait

mode, binary, emulator, scratch = sys.argv[1:5]
isolate_app_environment(os.path.join(scratch, "data"))
here = os.path.dirname(os.path.abspath(__file__))

# The desktop's default browser, the way a desktop registers one.
applications = os.path.join(scratch, "data", "applications")
config = os.path.join(scratch, "config")
os.makedirs(applications, exist_ok=True)
os.makedirs(config, exist_ok=True)
with open(os.path.join(applications, "sesame-test-browser.desktop"), "w", encoding="utf-8") as desktop:
    desktop.write("[Desktop Entry]\nType=Application\nName=Test Browser (MiniBrowser)\n"
                  f"Exec={sys.executable} {os.path.join(here, 'default_browser.py')} %u\n"
                  "MimeType=x-scheme-handler/http;x-scheme-handler/https;text/html;\nNoDisplay=true\n")
with open(os.path.join(config, "mimeapps.list"), "w", encoding="utf-8") as mimeapps:
    mimeapps.write("[Default Applications]\nx-scheme-handler/http=sesame-test-browser.desktop\n"
                   "x-scheme-handler/https=sesame-test-browser.desktop\ntext/html=sesame-test-browser.desktop\n")
os.environ["XDG_CONFIG_HOME"] = config
browser_result = os.path.join(scratch, "browser.json")
os.environ["SESAME_TEST_BROWSER_RESULT"] = browser_result

trace_path = os.path.join(scratch, "trace-1.jsonl")
arguments = [binary, f"--emulator={emulator}", f"--trace-events={trace_path}", "--sample=directory"]
if mode == "setting":
    arguments.append("--sign-in-with=browser")
app = subprocess.Popen(arguments)
seen = {}
try:
    trace = Trace(trace_path)
    trace.wait_for("window-shown")
    ui = Widgets.of_process(trace_path)
    if mode == "button":
        trace.wait_for("page-loaded")
        seen["button_in_view"] = ui.is_visible("push button", "Continue the sign-in in your web browser")
        ui.click("Continue the sign-in in your web browser")
    seen["waiting"] = wait("the window saying the sign-in is in the browser",
                           lambda: ui.is_visible("label", "Waiting for the browser"))
    trace.wait_for("loopback-redirect-received", answer="received", timeout=120)
    trace.wait_for("token-acquired", accountType="myGraphService")
    seen["rows"] = int(trace.wait_for("list-rendered", view="directory")["rows"])
    seen["people"] = len(ui.rows("People"))
    seen["waiting_after"] = ui.is_visible("label", "Waiting for the browser")
    seen["browser"] = wait("the browser's account of the sign-in", lambda: os.path.exists(browser_result) and json.load(
        open(browser_result, encoding="utf-8")))
finally:
    app.send_signal(signal.SIGTERM)
    try:
        app.wait(timeout=10)
    except subprocess.TimeoutExpired:
        app.kill()
print(json.dumps(seen))
