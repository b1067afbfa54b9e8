"""A console program that signs in with MSAL for Python through the desktop's identity broker,
as any program built on MSAL does once its developer opts in (`enable_broker_on_linux=True`):
MSAL, unchanged, asks whoever owns com.microsoft.identity.broker1 on the session bus, through
Microsoft's pymsalruntime.

    python msal_broker_app.py CLIENT_ID CACHE_FILE COMMAND [TENANT]

COMMAND is what its user asks for:
- interactive: sign in (acquire_token_interactive; the broker shows whatever it shows)
- accounts:    who is signed in (get_accounts, from the program's own token cache)
- silent:      a token for the first account, without asking anyone (acquire_token_silent)
- remove:      sign out (remove_account for every account)

TENANT is the authority's tenant as the app's developer wrote it (`organizations`, the default;
`common`; a domain name; a tenant id); MSAL looks its instance up as it does by default (instance
discovery on). MSAL's token cache is kept in CACHE_FILE between runs, as a program keeps it on disk. Each run
prints one JSON object: what the program got, as its user would notice it — a token Graph takes
(`graph`: the status of Graph's /me with it, and whose name it returned) or the error MSAL
returned. No token is printed: only its length, a digest (to tell two tokens apart) and some of
its claims. MSAL's and pymsalruntime's log go to CACHE_FILE.log.
"""
import base64
import hashlib
import json
import logging
import os
import sys

import msal
import requests

SCOPES = ["User.Read"]
AUTHORITY_HOST = "https://login.microsoftonline.com"
# The identity emulator serves Graph on its own host (its certificate names no other).
GRAPH_ME = "https://login.microsoftonline.com/v1.0/me"
CLAIMS = ("aud", "scp", "azp", "appid", "tid", "preferred_username", "upn", "exp", "deviceid")


def claims(token):
    """The claims of a JWT's payload (not verified: the program only looks)."""
    try:
        payload = token.split(".")[1]
        return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return {}


def graph_me(token):
    """What Graph's /me answers the token: (status, the user's name)."""
    response = requests.get(GRAPH_ME, headers={"Authorization": f"Bearer {token}"}, timeout=10)
    user = response.json().get("userPrincipalName") if response.status_code == 200 else None
    return response.status_code, user


def described(result):
    """A token result as the program's user would see it, without the token."""
    if not result:
        return {"result": None}
    if "access_token" not in result:
        return {key: result.get(key) for key in ("error", "error_description", "suberror", "_broker_status",
                                                  "_broker_error_code", "token_source") if key in result}
    token = result["access_token"]
    token_claims = claims(token)
    status, user = graph_me(token)
    return {
        "token": {
            "length": len(token),
            "digest": hashlib.sha256(token.encode()).hexdigest()[:16],
            "claims": {key: token_claims[key] for key in CLAIMS if key in token_claims},
            "lifetime": token_claims.get("exp", 0) - token_claims.get("iat", 0),
        },
        "token_source": result.get("token_source"),
        "username": (result.get("id_token_claims") or {}).get("preferred_username"),
        "graph": status,
        "graph_user": user,
    }


def main(client_id, cache_file, command, tenant="organizations"):
    logging.basicConfig(filename=cache_file + ".log", level=logging.DEBUG,
                        format="%(asctime)s %(process)d %(name)s %(levelname)s %(message)s")
    cache = msal.SerializableTokenCache()
    if os.path.exists(cache_file):
        with open(cache_file, encoding="utf-8") as stored:
            cache.deserialize(stored.read())
    app = msal.PublicClientApplication(client_id, authority=f"{AUTHORITY_HOST}/{tenant}", token_cache=cache,
                                       enable_broker_on_linux=True)
    seen = {"command": command, "tenant": tenant, "broker_enabled": getattr(app, "_enable_broker", None)}
    accounts = app.get_accounts()
    if command == "interactive":
        if seen["broker_enabled"] is False:
            # MSAL found no broker when it started (its one Ping): it would open a web browser
            # and wait for it, forever here.
            seen["error"] = "MSAL found no broker on the session bus"
        else:
            seen.update(described(app.acquire_token_interactive(
                SCOPES, parent_window_handle=app.CONSOLE_WINDOW_HANDLE)))
    elif command == "accounts":
        pass
    elif command == "silent":
        seen.update(described(app.acquire_token_silent_with_error(SCOPES, accounts[0]) if accounts else None))
    elif command == "remove":
        for account in accounts:
            app.remove_account(account)
        seen["removed"] = [account["username"] for account in accounts]
    else:
        raise SystemExit(f"unknown command {command}")
    seen["accounts"] = [account["username"] for account in app.get_accounts()]
    if cache.has_state_changed:
        with open(os.open(cache_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as stored:
            stored.write(cache.serialize())
    print(json.dumps(seen), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
