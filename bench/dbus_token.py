"""A program asking Sesame's account service for a token over D-Bus, warm: the D-Bus figure of
`make bench`.

    python dbus_token.py ACCOUNT_TYPE USERNAME CALLS

Calls org.sesame.Accounts1.GetAccessToken CALLS times on the session bus (after ten warm-up
calls) and prints {"ms": [each call's round trip in milliseconds, …]}. The user's "Always" for
this program (its executable, as the bus reports it) must already be kept.
"""
import json
import sys
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

account_type, username, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
arguments = GLib.Variant("(ssas)", (account_type, username, ["User.Read"]))


def call():
    reply = bus.call_sync("org.sesame.Sesame", "/org/sesame/Sesame", "org.sesame.Accounts1", "GetAccessToken", arguments,
                          GLib.VariantType("(sx)"), Gio.DBusCallFlags.NO_AUTO_START, 10000, None)
    token, _ = reply.unpack()
    if not token:
        raise SystemExit("the service gave no token")


for _ in range(10):
    call()
timings = []
for _ in range(calls):
    started = time.perf_counter()
    call()
    timings.append((time.perf_counter() - started) * 1000)
print(json.dumps({"ms": timings}))
