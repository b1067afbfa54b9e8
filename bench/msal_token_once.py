"""One acquire_token_silent by MSAL for Python in a fresh process, as a mail client's password
command written in Python runs it (mutt_oauth2.py and its kind): the baseline of `make bench`'s
mail-token figure, timed from outside with the interpreter's start.

    python msal_token_once.py AUTHORITY CLIENT_ID SCOPES CACHE_JSON

Prints the token's length (never the token); exits 1 when the cache has no token for SCOPES.
"""
import sys

import msal

authority, client_id, scopes, cache_path = sys.argv[1:5]
cache = msal.SerializableTokenCache()
with open(cache_path, encoding="utf-8") as f:
    cache.deserialize(f.read())
app = msal.PublicClientApplication(client_id, authority=authority, token_cache=cache, instance_discovery=False)
accounts = app.get_accounts()
result = app.acquire_token_silent(scopes.split(), account=accounts[0]) if len(accounts) == 1 else None
if not result or "access_token" not in result:
    raise SystemExit(f"MSAL found no token: {result and result.get('error')}")
print(len(result["access_token"]))
