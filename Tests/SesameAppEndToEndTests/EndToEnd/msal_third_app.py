"""A third program built on MSAL for Python, presenting the first one's app registration: the same
code as msal_broker_app.py in another script, so that the broker sees another program asking as
the same app.

    python msal_third_app.py CLIENT_ID CACHE_FILE COMMAND
"""
import sys

from msal_broker_app import main

if __name__ == "__main__":
    main(*sys.argv[1:5])
