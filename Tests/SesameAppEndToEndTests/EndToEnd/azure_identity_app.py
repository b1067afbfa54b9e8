"""A program on the Azure SDK for Python that signs in through the desktop's identity broker:
azure-identity-broker's InteractiveBrowserBrokerCredential, unchanged, as its documentation
shows it — an AuthenticationRecord kept after the first sign-in, and the next run's credential
made from it, silent.

    python azure_identity_app.py CLIENT_ID TENANT RECORD_FILE COMMAND

COMMAND: `authenticate` (the first run: sign in, keep the record in RECORD_FILE, get a token) or
`silent` (a later run: the record read back, a token without interaction). The credential's own
cache persists in the user's keyring (TokenCachePersistenceOptions), as the SDK recommends. Prints
one JSON object: the record's fields, and the token as a user would notice it (Graph's /me).
"""
import json
import sys

import msal
from azure.identity import AuthenticationRecord, CredentialUnavailableError, TokenCachePersistenceOptions
from azure.identity.broker import InteractiveBrowserBrokerCredential
from msal_broker_app import claims, graph_me

SCOPE = "https://graph.microsoft.com/User.Read"


def main(client_id, tenant, record_file, command):
    options = {"client_id": client_id, "tenant_id": tenant, "parent_window_handle": msal.PublicClientApplication.CONSOLE_WINDOW_HANDLE,
               "cache_persistence_options": TokenCachePersistenceOptions(name="sesame-azure-identity-test")}
    seen = {"command": command}
    try:
        if command == "authenticate":
            credential = InteractiveBrowserBrokerCredential(**options)
            record = credential.authenticate(scopes=[SCOPE])
            with open(record_file, "w", encoding="utf-8") as kept:
                kept.write(record.serialize())
        else:
            with open(record_file, encoding="utf-8") as kept:
                record = AuthenticationRecord.deserialize(kept.read())
            credential = InteractiveBrowserBrokerCredential(authentication_record=record, disable_automatic_authentication=True,
                                                            **options)
        seen["record"] = {"authority": record.authority, "tenant_id": record.tenant_id, "username": record.username,
                          "home_account_id": record.home_account_id}
        token = credential.get_token(SCOPE).token
        status, user = graph_me(token)
        seen.update({"graph": status, "graph_user": user, "claims": {key: claims(token).get(key) for key in ("appid", "tid")}})
    except (CredentialUnavailableError, Exception) as error:  # noqa: BLE001 — what the program's user would read
        seen["error"] = f"{type(error).__name__}: {error}"
    print(json.dumps(seen), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:5])
