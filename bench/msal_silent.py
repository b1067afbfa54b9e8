"""MSAL for Python's acquire_token_silent on Sesame's cache content: the baseline of `make bench`'s
silent-token figure.

    python msal_silent.py AUTHORITY CLIENT_ID SCOPES CACHE_JSON [ROUNDS]

Loads the cache (MSAL's unified schema, as Sesame stores it), finds the one account, and calls
acquire_token_silent for ROUNDS (5) of one second; prints {"rounds": [calls per second, …]}.
"""
import json
import sys
import time

import msal

authority, client_id, scopes, cache_path = sys.argv[1:5]
round_count = int(sys.argv[5]) if len(sys.argv) > 5 else 5
cache = msal.SerializableTokenCache()
with open(cache_path, encoding="utf-8") as f:
    cache.deserialize(f.read())
app = msal.PublicClientApplication(client_id, authority=authority, token_cache=cache, instance_discovery=False)
accounts = app.get_accounts()
if len(accounts) != 1:
    raise SystemExit(f"MSAL sees {len(accounts)} accounts in the cache")
scopes = scopes.split()
first = app.acquire_token_silent(scopes, account=accounts[0])
if not first or "access_token" not in first:
    raise SystemExit(f"MSAL found no token in the cache: {first and first.get('error')}")
rounds = []
for _ in range(round_count):
    started = time.perf_counter()
    count = 0
    while time.perf_counter() - started < 1:
        result = app.acquire_token_silent(scopes, account=accounts[0])
        assert result and result.get("token_source", "cache") == "cache", result
        count += 1
    rounds.append(count / (time.perf_counter() - started))
print(json.dumps({"rounds": rounds}))
