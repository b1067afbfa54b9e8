"""Microsoft's MSAL for Python without the broker, as most programs use it, against each authority
form an app's developer writes — `organizations`, `common`, the tenant's domain name, its id —
with MSAL's instance discovery on (its default): a device code sign-in (a person at the
verification page, as in msal_sign_in.py), then a token without interaction (a refresh at the
token endpoint the tenant's discovery names).

    python plain_msal_app.py CLIENT_ID TENANT...

Prints one JSON object: per tenant, who signed in, the ID token's issuer, and whether the silent
token came from the identity provider.
"""
import json
import os
import sys
import threading
import time

import msal
import requests

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "IdentityEmulatorTests", "MSAL"))
from msal_sign_in import verify_device  # noqa: E402

AUTHORITY_HOST = "https://login.microsoftonline.com"


def sign_in(client_id, tenant):
    app = msal.PublicClientApplication(client_id, authority=f"{AUTHORITY_HOST}/{tenant}")
    flow = app.initiate_device_flow(scopes=["User.Read"])
    if "user_code" not in flow:
        return {"error": f"initiate_device_flow: {flow.get('error')}: {flow.get('error_description')}"}
    # MSAL polls until the code expires (15 minutes): a person who could not finish ends it sooner.
    flow["expires_at"] = time.time() + 60
    person = threading.Thread(target=lambda: verify_device(requests.Session(), flow))
    person.start()
    result = app.acquire_token_by_device_flow(flow)
    person.join()
    if "access_token" not in result:
        return {"error": f"device code: {result.get('error')}: {result.get('error_description')}"}
    accounts = app.get_accounts()
    silent = app.acquire_token_silent(["User.Read"], account=accounts[0], force_refresh=True) if accounts else None
    return {
        "signed_in": result["id_token_claims"].get("preferred_username"),
        "issuer": result["id_token_claims"].get("iss"),
        "accounts": len(accounts),
        "silent": (silent or {}).get("token_source") if silent and "access_token" in silent else (silent or {}).get("error"),
    }


def main(client_id, *tenants):
    print(json.dumps({tenant: sign_in(client_id, tenant) for tenant in tenants}), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:])
