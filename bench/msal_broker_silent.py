"""The program of `make bench`'s broker figure: one warm MSAL for Python process, as an app that
signed in through the desktop's identity broker and asks for its token again and again.

    python msal_broker_silent.py CLIENT_ID SCOPE ACCOUNT_TYPE

bench/broker_silent.py starts it where login.microsoftonline.com is the identity emulator and
Sesame owns com.microsoft.identity.broker1 on the session bus, and answers what Sesame asks the
user meanwhile. It makes one PublicClientApplication (authority …/organizations,
`enable_broker_on_linux=True`, `instance_discovery=False`, as Tests/…/msal_broker_app.py) and reads
commands on stdin, one a line, answering each with one JSON line on stdout (`error` when it failed):

- `interactive`: acquire_token_interactive through the broker (Sesame's pages and question).
- `broker N`: N × acquire_token_silent through the broker; {"ms": [each call's time], …}.
- `cache N`: N × acquire_token_silent with the broker OFF (a second application made once, on a
  copy of the first one's token cache whose AccessToken entries expire an hour later): MSAL's own
  cache lookup.
- `refresh N CACHE_JSON`: N × acquire_token_silent with the broker off, on a copy of Sesame's own
  token cache for this app (its refresh token; made once, at the first `refresh`): MSAL refreshing
  by itself at the identity service, as the short-lived token is never fresh enough to keep.
- `dbus-allow` / `dbus N`: org.sesame.Accounts1.GetAccessToken(ACCOUNT_TYPE, alex, [SCOPE]) on
  the same bus (as bench/dbus_token.py): the first call waits for the user's answer (this program
  is asked about), then N timed calls.

Each call is checked: a token, from where the command says (`token_source`), or the command fails.
"""
import json
import sys
import time

import msal

AUTHORITY = "https://login.microsoftonline.com/organizations"
USER = "alex@contoso.onmicrosoft.com"
client_id, scope, account_type = sys.argv[1:4]
scopes = [scope]
cache = msal.SerializableTokenCache()
broker_app = msal.PublicClientApplication(client_id, authority=AUTHORITY, token_cache=cache, enable_broker_on_linux=True,
                                          instance_discovery=False)
own = {}  # the applications without the broker, made once each: "cache", "refresh"


def timed(application, source, count):
    """`count` acquire_token_silent calls of `application` for alex, each from `source`: their ms."""
    account = next(a for a in application.get_accounts() if a["username"].lower() == USER)
    timings = []
    for _ in range(count):
        started = time.perf_counter()
        result = application.acquire_token_silent(scopes, account=account)
        timings.append((time.perf_counter() - started) * 1000)
        if not result or "access_token" not in result:
            raise RuntimeError(f"no token: {result and {k: result.get(k) for k in ('error', 'error_description')}}")
        if result.get("token_source") != source:
            raise RuntimeError(f"the token came from {result.get('token_source')}, not {source}")
    return {"ms": timings}


def without_broker(entries):
    """An application with the broker off over a token cache holding `entries` (MSAL's schema)."""
    token_cache = msal.SerializableTokenCache()
    token_cache.deserialize(json.dumps(entries))
    return msal.PublicClientApplication(client_id, authority=AUTHORITY, token_cache=token_cache, instance_discovery=False)


def fresh_copy():
    """The broker application's cache, its access tokens made to expire an hour from now: what
    MSAL finds when the token it keeps is fresh (more than its 5-minute margin left)."""
    entries = json.loads(cache.serialize())
    later = str(int(time.time()) + 3600)
    for entry in entries.get("AccessToken", {}).values():
        entry["expires_on"] = entry["extended_expires_on"] = later
        entry.pop("refresh_on", None)
    return without_broker(entries)


def sesame_copy(path):
    """Sesame's token cache file for this app (MSAL's schema): its account and refresh token, for
    MSAL to refresh with by itself."""
    with open(path, encoding="utf-8") as stored:
        entries = json.load(stored)
    return without_broker({kind: value for kind, value in entries.items()
                           if kind in ("Account", "RefreshToken", "IdToken", "AccessToken", "AppMetadata")})


def get_access_token(timeout_ms):
    from gi.repository import Gio, GLib
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    reply = bus.call_sync("org.sesame.Sesame", "/org/sesame/Sesame", "org.sesame.Accounts1", "GetAccessToken",
                          GLib.Variant("(ssas)", (account_type, USER, scopes)), GLib.VariantType("(sx)"),
                          Gio.DBusCallFlags.NO_AUTO_START, timeout_ms, None)
    if not reply.unpack()[0]:
        raise RuntimeError("the service gave no token")


def run(command):
    words = command.split()
    if words[0] == "interactive":
        if not getattr(broker_app, "_enable_broker", False):
            raise RuntimeError("MSAL found no broker on the session bus")
        result = broker_app.acquire_token_interactive(scopes, parent_window_handle=broker_app.CONSOLE_WINDOW_HANDLE)
        if "access_token" not in result:
            raise RuntimeError(f"no token: {result.get('error')}: {result.get('error_description')}")
        return {"token_source": result.get("token_source")}
    count = int(words[1]) if len(words) > 1 else 0
    if words[0] == "broker":
        return timed(broker_app, "broker", count)
    if words[0] == "cache":
        if "cache" not in own:
            own["cache"] = fresh_copy()
        return timed(own["cache"], "cache", count)
    if words[0] == "refresh":
        if "refresh" not in own:
            own["refresh"] = sesame_copy(words[2])
        return timed(own["refresh"], "identity_provider", count)
    if words[0] == "dbus-allow":
        get_access_token(120_000)
        return {}
    if words[0] == "dbus":
        timings = []
        for _ in range(count):
            started = time.perf_counter()
            get_access_token(10_000)
            timings.append((time.perf_counter() - started) * 1000)
        return {"ms": timings}
    raise RuntimeError(f"unknown command {command!r}")


for line in sys.stdin:
    if not line.strip():
        continue
    try:
        answer = run(line.strip())
    except Exception as error:  # noqa: BLE001 — told to the bench, which stops
        answer = {"error": f"{type(error).__name__}: {error}"}
    print(json.dumps(answer), flush=True)
