"""Drive `sesame --automation-mode` with WebKitWebDriver and Selenium, as any W3C WebDriver
client would: sesame is the browser binary; the session's browsing context is its sign-in view.

    python sign_in_with_webdriver.py SESAME_BINARY EMULATOR_URL TRACE_FILE [FLOW]

FLOW is `alex` (the default), `wrong-password` (a wrong password first: the inline error, then
the right one) or `megan` (her SMS code, read from the page as the emulator's demo mode shows
it). Fills Microsoft's sign-in pages by their element ids, prints one JSON line with what it saw.
"""
import json
import sys

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

sesame, emulator, trace = sys.argv[1:4]
flow = sys.argv[4] if len(sys.argv) > 4 else "alex"
user = "megan@contoso.onmicrosoft.com" if flow == "megan" else "alex@contoso.onmicrosoft.com"

options = webdriver.WebKitGTKOptions()
options.binary_location = sesame
options.set_capability("browserName", "sesame")
for argument in ("--automation-mode", f"--emulator={emulator}", f"--trace-events={trace}", "--sample=directory"):
    options.add_argument(argument)
service = webdriver.WebKitGTKService(executable_path="/usr/bin/WebKitWebDriver")
driver = webdriver.WebKitGTK(options=options, service=service)
seen = {}
try:
    wait = WebDriverWait(driver, 30)
    username = wait.until(EC.presence_of_element_located((By.ID, "i0116")))
    seen["first_page"] = driver.current_url.split("?")[0]
    seen["title"] = driver.title
    username.clear()
    username.send_keys(user)
    driver.find_element(By.ID, "idSIButton9").click()
    if flow == "wrong-password":
        wait.until(EC.presence_of_element_located((By.ID, "i0118"))).send_keys("not-the-password")
        driver.find_element(By.ID, "idSIButton9").click()
        error = wait.until(EC.visibility_of_element_located((By.ID, "passwordError")))
        seen["inline_error"] = error.text
        seen["still_on"] = driver.current_url.split("?")[0]
    wait.until(EC.presence_of_element_located((By.ID, "i0118"))).send_keys("Passw0rd!")
    driver.find_element(By.ID, "idSIButton9").click()
    if flow == "megan":
        code = wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#demoCode code"))).text
        seen["sms_page"] = driver.find_element(By.ID, "idDiv_SAOTCC_Description").text
        driver.find_element(By.ID, "idTxtBx_SAOTCC_OTC").send_keys(code)
        driver.find_element(By.ID, "idSubmit_SAOTCC_Continue").click()
    wait.until(EC.presence_of_element_located((By.ID, "KmsiCheckboxField")))
    seen["kmsi_page"] = driver.current_url.split("?")[0]
    driver.find_element(By.ID, "idSIButton9").click()
    try:
        WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.ID, "permissionList")))
        seen["consent"] = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#permissionList li")]
        driver.find_element(By.ID, "idSIButton9").click()
    except TimeoutException:
        seen["consent"] = None

    def rendered(_):
        try:
            with open(trace) as lines:
                return any('"list-rendered"' in line for line in lines)
        except FileNotFoundError:
            return False

    WebDriverWait(driver, 30).until(rendered)
    seen["last_url"] = driver.current_url.split("?")[0]
finally:
    driver.quit()
print(json.dumps(seen))
