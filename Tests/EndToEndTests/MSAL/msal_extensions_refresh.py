"""An MSAL-based tool on a token cache Sesame shares: Microsoft's MSAL for Python over
msal-extensions' PersistedTokenCache, unchanged but for `instance_discovery=False`, refreshing
one account's token again and again (`acquire_token_silent_with_error(force_refresh=True)`:
`acquire_token_silent`, telling why when it gets none), as azure-cli
and azure-identity do through the same two libraries.

    REQUESTS_CA_BUNDLE=ca.pem python msal_extensions_refresh.py \\
        --authority https://127.0.0.1:PORT/contoso.onmicrosoft.com --client-id ID \\
        --username alex@contoso.onmicrosoft.com --count 200 --lock filelock \\
        (--file CACHE.json | --keyring SIGNAL_FILE --schema NAME --attribute KEY=VALUE …)

--lock filelock: msal-extensions' lock without its optional portalocker (what a plain
`pip install msal-extensions` gives: the lock file created exclusively); --lock portalocker: with
it (that creation, then flock on the file).

Prints `ready` once the account is found, waits for a line on stdin (so that the other program
starts at the same moment), refreshes --count times, and prints one JSON line: how many
refreshes succeeded, the first failure (MSAL's error and description: never a token), which lock
class msal-extensions used, and the seconds it took. Exits 0 when the run happened, whatever
the refreshes' outcome (the test asserts on the summary), 2 when it could not start.
"""
import argparse
import json
import sys
import time


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--authority", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--username", required=True)
    parser.add_argument("--scope", action="append", default=[])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--lock", choices=["filelock", "portalocker"], default="filelock")
    parser.add_argument("--file")
    parser.add_argument("--keyring", help="the signal file of a LibsecretPersistence")
    parser.add_argument("--schema")
    parser.add_argument("--attribute", action="append", default=[])
    arguments = parser.parse_args()

    if arguments.lock == "filelock":
        # As if portalocker were not installed: msal_extensions.token_cache falls back to its
        # own filelock.CrossPlatLock when importing portalocker fails.
        sys.modules["portalocker"] = None
    import msal
    import msal_extensions
    from msal_extensions import token_cache

    if arguments.keyring:
        attributes = dict(pair.split("=", 1) for pair in arguments.attribute)
        persistence = msal_extensions.LibsecretPersistence(
            arguments.keyring, schema_name=arguments.schema, attributes=attributes)
    else:
        persistence = msal_extensions.FilePersistence(arguments.file)
    cache = msal_extensions.PersistedTokenCache(persistence)
    app = msal.PublicClientApplication(
        arguments.client_id, authority=arguments.authority, token_cache=cache, instance_discovery=False)

    accounts = app.get_accounts(username=arguments.username)
    if len(accounts) != 1:
        print(f"msal_extensions_refresh: {len(accounts)} accounts named {arguments.username} in the cache", file=sys.stderr)
        sys.exit(2)
    account = accounts[0]
    scopes = arguments.scope or ["User.Read"]

    print("ready", flush=True)
    sys.stdin.readline()
    started = time.monotonic()
    succeeded = 0
    failure = None
    for attempt in range(1, arguments.count + 1):
        try:
            result = app.acquire_token_silent_with_error(scopes, account, force_refresh=True)
        except Exception as error:  # msal-extensions' LockError, a cache it cannot parse, …
            failure = {"attempt": attempt, "exception": type(error).__name__, "message": str(error)[:300]}
            break
        if result and "access_token" in result:
            succeeded += 1
            continue
        result = result or {}
        failure = {
            "attempt": attempt,
            "error": result.get("error", "no token and no error"),
            "error_description": (result.get("error_description") or "")[:300],
        }
        break

    print(json.dumps({
        "refreshes": succeeded,
        "failure": failure,
        "lock": f"{token_cache.CrossPlatLock.__module__}.{token_cache.CrossPlatLock.__name__}",
        "seconds": round(time.monotonic() - started, 3),
    }), flush=True)


if __name__ == "__main__":
    main()
