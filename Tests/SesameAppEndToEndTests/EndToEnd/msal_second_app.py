"""Another program built on MSAL for Python, with an app registration of its own: the same code
as msal_broker_app.py in another script, so that the broker sees another program.

    python msal_second_app.py CLIENT_ID CACHE_FILE COMMAND
"""
import sys

from msal_broker_app import main

if __name__ == "__main__":
    main(*sys.argv[1:5])
