"""The test's default web browser, registered the desktop way (a .desktop file whose Exec is
this script, named in mimeapps.list for x-scheme-handler/http and https): WebKitGTK's own
MiniBrowser, driven by WebDriver as a person would use it. GIO starts it with the sign-in URL;
it signs alex in on the identity service's pages with the keyboard and stops on the page the app's
loopback listener answers.

    python default_browser.py URL      (SESAME_TEST_BROWSER_RESULT names where to write what it saw)
"""
import glob
import json
import os
import sys
import time
from urllib.parse import urlsplit

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.command import Command

USER = "alex@contoso.onmicrosoft.com"
PASSWORD = "Passw0rd!"


def inherited():
    """The sockets and pipes this browser holds as it starts, above its standard streams: only
    what the program that started it (Sesame, through GIO) let it inherit — nothing, if Sesame
    keeps its own to itself."""
    held = []
    for entry in sorted(os.listdir("/proc/self/fd"), key=int):
        try:
            target = os.readlink(f"/proc/self/fd/{entry}")
        except OSError:
            continue
        if int(entry) > 2 and target.startswith(("socket:", "pipe:")):
            held.append(f"{entry} → {target}")
    return held


def main():
    url = sys.argv[1]
    result_path = os.environ["SESAME_TEST_BROWSER_RESULT"]
    seen = {"opened": urlsplit(url)._replace(query="").geturl(), "pages": [], "inherited": inherited()}
    options = webdriver.WebKitGTKOptions()
    options.binary_location = glob.glob("/usr/lib/*/webkit2gtk-4.1/MiniBrowser")[0]
    options.add_argument("--automation")
    service = webdriver.WebKitGTKService(executable_path="/usr/bin/WebKitWebDriver")
    driver = webdriver.WebKitGTK(options=options, service=service)
    try:
        driver.get(url)
        deadline = time.monotonic() + 60
        last = None
        while time.monotonic() < deadline:
            try:
                page = driver.execute_script(
                    "return [location.href, document.title, (document.activeElement || {}).id || '',"
                    " !!document.getElementById('i0116'), !!document.getElementById('i0118'),"
                    " !!document.getElementById('idSIButton9'), (document.getElementById('message') || {}).textContent || '']")
            except WebDriverException:
                time.sleep(0.1)  # between two looks at the page; the 60 s deadline only bounds a hang
                continue
            href, title, focused, username, password, primary, message = page
            if urlsplit(href).hostname == "127.0.0.1" and message:
                seen["answered_at"] = f"{urlsplit(href).scheme}://{urlsplit(href).netloc}{urlsplit(href).path}"
                seen["title"] = title
                seen["message"] = message
                break
            if (href, title) == last:
                time.sleep(0.1)  # between two looks at the page; the 60 s deadline only bounds a hang
                continue
            last = (href, title)
            seen["pages"].append(title)
            active = driver.switch_to.active_element
            if username:
                active.send_keys(Keys.CONTROL, "a")
                active.send_keys(USER, Keys.ENTER)
            elif password:
                active.send_keys(PASSWORD, Keys.ENTER)
            elif primary:
                driver.find_element(By.ID, "idSIButton9").click()
    finally:
        with open(result_path, "w", encoding="utf-8") as out:
            json.dump(seen, out)
        # The session ends (WebKitWebDriver closes MiniBrowser); the driver process does not
        # always end on SIGTERM when its parent is not a terminal, so it is ended outright.
        try:
            driver.execute(Command.QUIT)
        finally:
            driver.service.process.kill()
            driver.service.process.wait()


if __name__ == "__main__":
    main()
