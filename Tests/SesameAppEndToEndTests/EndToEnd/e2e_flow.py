"""One end-to-end flow through the real app (see sesame_e2e.py for how it is driven).

    python e2e_flow.py FLOW SESAME_BINARY EMULATOR_URL SCRATCH_DIR

Prints one JSON object: what the flow saw on screen. The app's trace of run N is in
SCRATCH_DIR/trace-N.jsonl; its tokens and web data in SCRATCH_DIR/data. EndToEndFlowTests.swift
runs every flow and says what must hold.
"""
import json
import os
import signal
import sys
import urllib.request
from urllib.parse import parse_qs, urlsplit

from selenium.webdriver.common.keys import Keys
from sesame_e2e import (PASSWORD, Sesame, StepFailed, descendants, inheritable_descriptors, isolate_app_environment,
                        shared_descriptors, wait)

flow, binary, emulator, scratch = sys.argv[1:5]
isolate_app_environment(os.path.join(scratch, "data"))
runs = 0
seen = {}


def launch(sample):
    global runs
    runs += 1
    return Sesame(binary, emulator, os.path.join(scratch, f"trace-{runs}.jsonl"), sample)


def rows_after(app, mark, view="directory"):
    """The people (or tasks) the list shows once the app has rendered it after `mark`."""
    event = app.trace.wait_for("list-rendered", since=mark, view=view)
    return int(event["rows"])


def rows_after_sign_in(app, mark, view="directory"):
    """The rows of the list the app renders once the sign-in that began after `mark` has its
    token (a sign-out before it renders an empty list, which must not count)."""
    app.trace.wait_for("token-acquired", since=mark)
    events = app.trace.events()
    signed_in = max(index for index, event in enumerate(events) if index >= mark and event.get("event") == "token-acquired")
    return rows_after(app, signed_in + 1, view)


def shown_rows(app, table="People"):
    """The people the table shows; none while a status page is in its place."""
    return app.ui.rows(table) if app.ui.is_visible("table", table) else []


def shown_tasks(app):
    """The tasks the list shows; none while a status page is in its place."""
    return app.ui.list_items("Tasks") if app.ui.is_visible("list box", "Tasks") else []


def search(app, text):
    mark = app.trace.mark()
    app.ui.type("Search the directory", text)
    rows_after(app, mark)
    return shown_rows(app)


def signed_in_as(app):
    return next((text for text in app.ui.label_texts() if text.startswith("Signed in as")), None)


def alex(app):
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    rows_after(app, 0)
    seen["rows"] = len(app.ui.rows("People"))
    seen["sign_in_visible_after"] = app.ui.is_visible("push button", "Cancel sign-in")
    # Signing out, then in again: the service asks who signs in rather than reusing alex's session.
    mark = app.trace.mark()
    app.ui.from_menu("Account", "Sign out of this sample")
    app.trace.wait_for("signed-out", since=mark)
    seen["rows_after_sign_out"] = len(shown_rows(app))
    app.ui.click("Sign in")
    app.page_with("i0116", "the user name page after signing out")
    seen["asked_again"] = True
    app.fill("i0116", "megan@contoso.onmicrosoft.com")
    app.submit("idSIButton9")
    app.page_with("i0118", "the password page")
    app.fill("i0118", PASSWORD)
    app.submit("idSIButton9")
    app.page_with("idTxtBx_SAOTCC_OTC", "the SMS code page")
    app.fill("idTxtBx_SAOTCC_OTC", app.demo_code())
    app.submit("idSubmit_SAOTCC_Continue")
    app.page_with("KmsiCheckboxField", "the stay-signed-in page")
    if not app.submit("idSIButton9"):
        app.answer_consent(seen)
    seen["rows_after_switch"] = rows_after_sign_in(app, mark)


def wrong_password(app):
    app.page_with("i0116", "the user name page")
    app.fill("i0116", "alex@contoso.onmicrosoft.com")
    app.submit("idSIButton9")
    app.page_with("i0118", "the password page")
    app.fill("i0118", "not-the-password")
    app.submit("idSIButton9")
    seen["inline_error"] = app.text_of("passwordError", "the inline password error")
    seen["still_on"] = app.url
    app.fill("i0118", PASSWORD)
    app.submit("idSIButton9")
    app.page_with("KmsiCheckboxField", "the stay-signed-in page")
    if not app.submit("idSIButton9"):
        app.answer_consent(seen)
    rows_after(app, 0)


def megan(app):
    app.sign_in_entra("megan@contoso.onmicrosoft.com", seen=seen)
    rows_after(app, 0)


def directory_search(app):
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    rows_after(app, 0)
    seen["meg"] = search(app, "meg")
    seen["apostrophe"] = search(app, "O'Br")
    seen["nobody"] = search(app, "zzzq")
    seen["status"] = app.ui.label_texts()


def directory_paging(app):
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    seen["first_rows"] = rows_after(app, 0)
    seen["first_table_rows"] = len(app.ui.rows("People"))
    mark = app.trace.mark()
    app.ui.scroll_to_end("People")
    seen["after_scroll_rows"] = rows_after(app, mark)
    seen["after_scroll_table_rows"] = len(app.ui.rows("People"))
    names = app.ui.rows("People", column=2)
    seen["distinct_user_names"] = len(set(names))


def consent_retry(app):
    app.sign_in_entra("alex@contoso.onmicrosoft.com", consent=False, seen=seen)
    error = app.ui.find("label", "Sign-in error")
    seen["error"] = app.ui.text(error)
    seen["retry_visible"] = app.ui.is_visible("push button", "Retry sign-in")
    seen["list_before_retry"] = bool(app.trace.find("list-rendered"))
    mark = app.trace.mark()
    app.ui.click("Retry sign-in")
    app.trace.wait_for("page-loaded", since=mark)
    seen["sign_in_visible_on_retry"] = app.ui.is_visible("push button", "Cancel sign-in")
    seen["retry_page"] = app.url
    # The service remembers alex (single sign-on): straight to consent, or to the user name again.
    if app.next_page({"username": "i0116", "consent": "permissionList"}, "the page Retry opens") == "username":
        app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    else:
        app.answer_consent(seen)
    rows_after_sign_in(app, mark)
    seen["error_visible_after"] = app.ui.is_visible("label", "Sign-in error")


def add_task(app, text):
    mark = app.trace.mark()
    app.ui.type("New task", text)
    app.ui.click("Add the task")
    return rows_after(app, mark, view="tasks")


def tasks(app):
    app.sign_in_b2c("sam@example.com")
    rows_after(app, 0, view="tasks")
    seen["sam"] = wait("the signed-in line", lambda: signed_in_as(app))
    seen["sam_before"] = shown_tasks(app)
    add_task(app, "Water the plants")
    add_task(app, "Call the bank")
    seen["sam_tasks"] = shown_tasks(app)
    mark = app.trace.mark()
    app.ui.from_menu("Account", "Sign out of this sample")
    app.trace.wait_for("signed-out", since=mark)
    seen["after_sign_out"] = shown_tasks(app)
    seen["action_after_sign_out"] = app.ui.is_visible("push button", "Sign in")
    mark = app.trace.mark()
    app.ui.click("Sign in")
    app.sign_in_b2c("kim@example.com")
    rows_after_sign_in(app, mark, view="tasks")
    seen["kim"] = wait("the signed-in line for kim", lambda: (lambda s: s if s and "Kim" in s else None)(signed_in_as(app)))
    seen["kim_tasks"] = shown_tasks(app)


def forgot_password(app):
    app.page_with("forgotPassword", "the B2C sign-in page")
    app.submit("forgotPassword")
    app.page_with("emailVer_but_send", "the password-reset page")
    seen["reset_page"] = app.text_of("pageTitle", "the password-reset page's title")
    seen["reset_url"] = app.url
    seen["reset_policy"] = parse_qs(urlsplit(app.driver.current_url).query).get("p")
    app.fill("email", "kim@example.com")
    app.submit("emailVer_but_send")
    code = app.demo_code()
    app.fill("emailVerificationCode", code)
    app.submit("emailVer_but_verify")
    app.page_with("newPassword", "the new-password page")
    app.fill("newPassword", "N3w-Passw0rd!")
    app.fill("reenterPassword", "N3w-Passw0rd!")
    app.submit("continue")
    rows_after(app, 0, view="tasks")
    seen["after_reset"] = wait("the signed-in line", lambda: signed_in_as(app))
    mark = app.trace.mark()
    app.ui.from_menu("Account", "Sign in as someone else")
    app.sign_in_b2c("kim@example.com", "N3w-Passw0rd!")
    rows_after_sign_in(app, mark, view="tasks")
    seen["new_password_signs_in"] = wait("the signed-in line", lambda: signed_in_as(app))


def sign_up(app):
    app.page_with("createAccount", "the B2C sign-in page")
    app.submit("createAccount")
    app.page_with("newPassword", "the sign-up page")
    seen["sign_up_page"] = app.text_of("pageTitle", "the sign-up page's title")
    for field, value in (("email", "robin@example.com"), ("newPassword", "R0bin-Passw0rd"), ("reenterPassword", "R0bin-Passw0rd"),
                         ("displayName", "Robin Ortiz"), ("givenName", "Robin"), ("surname", "Ortiz")):
        app.fill(field, value)
    app.submit("continue")
    rows_after(app, 0, view="tasks")
    seen["after_sign_up"] = wait("the signed-in line", lambda: signed_in_as(app))
    mark = app.trace.mark()
    app.ui.from_menu("Account", "Sign in as someone else")
    app.sign_in_b2c("robin@example.com", "R0bin-Passw0rd")
    rows_after_sign_in(app, mark, view="tasks")
    seen["signs_in_again"] = wait("the signed-in line", lambda: signed_in_as(app))


def me_log(app):
    """The console's log, once there is one (before the first call the page is a status page)."""
    return next(iter(app.ui.all("text", "Log")), None)


def call_graph(app):
    log = me_log(app)
    before = app.ui.text(log).count("→ 200") if log else 0
    app.ui.click("Call Microsoft Graph")
    return log, before


def wait_for_me(app, log, before):
    wait("/me to answer 200 in the log", lambda: (lambda shown: shown and app.ui.text(shown).count("→ 200") > before)(me_log(app)))


def me(app):
    mark = app.trace.mark()
    log, before = call_graph(app)
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    wait_for_me(app, log, before)
    seen["first_navigations"] = len(app.trace.find("navigation", since=mark))

    mark = app.trace.mark()
    log, before = call_graph(app)
    wait_for_me(app, log, before)
    seen["second_navigations"] = len(app.trace.find("navigation", since=mark))
    seen["second_token_requests"] = [e.get("status") for e in app.trace.find("token-request", since=mark)]
    seen["second_sign_in_visible"] = app.ui.is_visible("push button", "Cancel sign-in")

    seen["revoke_status"] = app.revoke_sign_in_sessions("alex@contoso.onmicrosoft.com")
    mark = app.trace.mark()
    log, before = call_graph(app)
    app.page_with("i0116", "the user name page after the revocation")
    seen["third_sign_in_visible"] = app.ui.is_visible("push button", "Cancel sign-in")
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    wait_for_me(app, log, before)
    seen["third_token_requests"] = [e.get("status") for e in app.trace.find("token-request", since=mark)]
    seen["third_navigations"] = len(app.trace.find("navigation", since=mark))
    seen["log"] = app.ui.text(log)


def keyboard_megan(app):
    """megan signs in with the keyboard alone: focus starts in each page's field (or on its primary
    button), Enter goes forward, Escape goes back."""
    steps = seen.setdefault("steps", [])
    app.focused("i0116", "the user name field")
    app.type_keys(Keys.CONTROL, "a")
    app.type_keys("megan@contoso.onmicrosoft.com")
    app.press(Keys.ENTER)
    steps.append(app.focused("i0118", "the password page after Enter").get_attribute("id"))
    app.press(Keys.ESCAPE)
    steps.append(app.focused("i0116", "the user name page after Escape").get_attribute("id"))
    seen["name_kept"] = app.driver.switch_to.active_element.get_property("value")
    app.press(Keys.ENTER)
    steps.append(app.focused("i0118", "the password page after Enter").get_attribute("id"))
    app.type_keys(PASSWORD)
    app.press(Keys.ENTER)
    steps.append(app.focused("idTxtBx_SAOTCC_OTC", "the SMS code page after Enter").get_attribute("id"))
    app.type_keys(app.demo_code())
    app.press(Keys.ENTER)
    steps.append(app.focused("idSIButton9", "the stay-signed-in page's Yes after Enter").get_attribute("id"))
    seen["kmsi_title"] = app.driver.title
    if not app.press(Keys.ENTER):
        steps.append(app.focused("idSIButton9", "the consent page's Accept after Enter").get_attribute("id"))
        seen["consent_title"] = app.driver.title
        seen["redirect"] = app.press(Keys.ENTER)
    rows_after(app, 0)


def keyboard_sam(app):
    """sam signs in to B2C with the keyboard alone: e-mail, Tab, password, Enter."""
    app.focused("signInName", "the e-mail field")
    app.type_keys(Keys.CONTROL, "a")  # demo mode suggests an account: type over it
    app.type_keys("sam@example.com")
    app.type_keys(Keys.TAB)
    app.focused("password", "the password field after Tab")
    app.type_keys(PASSWORD)
    seen["redirect"] = app.press(Keys.ENTER)
    if not seen["redirect"]:
        raise StepFailed(f"Enter after the password did not sign in; the view shows {app.where()}")
    rows_after(app, 0, view="tasks")
    seen["sam"] = wait("the signed-in line", lambda: signed_in_as(app))


def company(app):
    """alex at work: the pages and the token exchange go through the company's proxy, to a host
    whose certificate the company's CA signed (CompanyNetworkTests sets the scene)."""
    app.page_with("i0116", "the user name page")
    seen["host"] = wait("the host bar", lambda: next((t for t in app.ui.label_texts() if "contoso" in t), None))
    app.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    seen["rows"] = rows_after(app, 0)


def federated(app):
    """pat's domain is federated: after his user name, his organisation's own sign-in page (AD FS
    on another host) asks for his password, and posts its signed answer back to Entra."""
    app.page_with("i0116", "the user name page")
    app.fill("i0116", "pat@fabrikam.example")
    app.submit("idSIButton9")
    app.page_with("passwordInput", "the organisation's password page")
    seen["organisation_page"] = app.url
    seen["organisation_title"] = app.driver.title
    # What the organisation's provider was told of the page that sent the user there.
    seen["organisation_referrer"] = app.driver.execute_script("return document.referrer")
    seen["organisation_host"] = wait("the host bar", lambda: next((t for t in app.ui.label_texts() if "localhost" in t), None))
    app.fill("passwordInput", PASSWORD)
    app.submit("submitButton")
    app.page_with("KmsiCheckboxField", "the stay-signed-in page, back at Entra")
    seen["back_at"] = app.url
    if not app.submit("idSIButton9"):
        app.answer_consent(seen)
    seen["rows"] = rows_after_sign_in(app, 0)
    seen["signed_in"] = app.ui.rows("People")[:3]
    # A second sign-in after pages of two sites and Graph's answer: WebKit starts its processes
    # again while the app's own connections (to the identity service, to Graph) are open. No
    # process the app started holds a socket, pipe or file of the app's.
    app.ui.from_menu("Account", "Sign in as someone else")
    app.page_with("i0116", "the second sign-in's user name page")
    pid = process_of(app)
    children = descendants(pid)
    seen["children"] = sorted({open(f"/proc/{child}/comm", encoding="utf-8").read().strip() for child in children
                               if os.path.exists(f"/proc/{child}/comm")})
    seen["children_hold"] = [held for child in children for held in shared_descriptors(pid, child, [scratch])]
    # And nothing the app holds would pass to a program it starts: its own sockets (SwiftNIO's
    # connections among them), pipes and files are close-on-exec.
    seen["inheritable"] = inheritable_descriptors(pid, [scratch])


def untrusted(app):
    """The service's certificate is signed by a CA this computer does not trust: the view shows
    Sesame's page instead of the service's, and never goes on."""
    seen["error"] = app.text_of("errorMessage", "Sesame's page about the certificate")
    seen["title"] = app.driver.title
    seen["host"] = wait("the host bar", lambda: next((t for t in app.ui.label_texts() if "contoso" in t), None))


def restart(first):
    first.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
    seen["first_rows"] = rows_after(first, 0)
    first.quit()
    second = launch("directory")
    try:
        seen["second_rows"] = rows_after(second, 0)
        seen["second_sign_in_visible"] = second.ui.is_visible("push button", "Cancel sign-in")
        seen["second_rows_in_table"] = len(second.ui.rows("People"))
    finally:
        second.quit()


def emulator_control(path, body=None):
    """The emulator's own controls: POST with a body, GET without."""
    request = urllib.request.Request(f"{emulator.rstrip('/')}/.emulator/{path}",
                                     data=None if body is None else body.encode(), method="GET" if body is None else "POST")
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


def process_of(app):
    """The app's process id (the one WebKitWebDriver started for this run)."""
    if not app.is_running():
        raise StepFailed("the app's process is gone")
    return app.process


def crash(first):
    """alex signs in; while the directory's first Graph call is under way (the emulator holds its
    answer back), the app is killed with SIGKILL: no handler, no flush, no goodbye. Started again,
    it is signed in without a page: what the redemption gave was stored before that call left."""
    graph_before = emulator_control("requests")["graph"]
    emulator_control("faults", "graph:latency=20s")
    try:
        first.sign_in_entra("alex@contoso.onmicrosoft.com", seen=seen)
        wait("the directory's Graph call under way", lambda: emulator_control("requests")["graph"] > graph_before, interval=0.005)
        os.kill(process_of(first), signal.SIGKILL)
        seen["rendered_before_kill"] = bool(first.trace.find("list-rendered"))
    finally:
        emulator_control("faults", "")
    try:
        first.quit()
    except Exception:  # noqa: BLE001 — WebDriver's browser is gone
        pass
    second = launch("directory")
    try:
        seen["second_rows"] = rows_after(second, 0)
        seen["second_sign_in_visible"] = second.ui.is_visible("push button", "Cancel sign-in")
    finally:
        second.quit()


FLOWS = {
    "alex": ("directory", alex), "wrong-password": ("directory", wrong_password), "megan": ("directory", megan),
    "search": ("directory", directory_search), "paging": ("directory", directory_paging),
    "consent-retry": ("directory", consent_retry), "tasks": ("tasks", tasks), "forgot-password": ("tasks", forgot_password),
    "sign-up": ("tasks", sign_up), "me": ("me", me), "restart": ("directory", restart),
    "keyboard-megan": ("directory", keyboard_megan), "keyboard-sam": ("tasks", keyboard_sam),
    "company": ("directory", company), "untrusted": ("directory", untrusted),
    "federated": ("directory", federated), "crash": ("directory", crash),
}

sample, run = FLOWS[flow]
app = launch(sample)
try:
    run(app)
except StepFailed as failure:
    # One line that names the flow and the step (what `make test-e2e` collects).
    print(f"E2E-STEP-FAILED flow={flow}: {failure}", file=sys.stderr)
    # Where it stood: the view's page and the app's last trace events (the trace is redacted).
    app.report_where_it_stood(scratch)
    raise
finally:
    try:
        app.quit()
    except Exception:  # noqa: BLE001 — already quit (restart)
        pass
print(json.dumps(seen))
