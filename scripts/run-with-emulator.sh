#!/usr/bin/env bash
# `make run`: the identity emulator on a free port (demo mode; its state under
# $XDG_STATE_HOME/sesame/emulator so consents and SSO survive), the app against it, and the
# emulator stopped when the app exits. Usage: run-with-emulator.sh BIN_DIR [sesame options…]
set -euo pipefail

bin=$1
shift
state="${XDG_STATE_HOME:-$HOME/.local/state}/sesame/emulator"
mkdir -p "$state"
log="$state/emulator.log"

# The log is emptied here, before the emulator starts: the loop below must never read the file
# before it exists, nor the address of an emulator an earlier run left in it.
: >"$log"
"$bin/identity-emulator" --port 0 --demo --state-dir "$state" >>"$log" 2>&1 &
emulator=$!
trap 'kill "$emulator" 2>/dev/null || true' EXIT

url=""
for _ in $(seq 1 300); do
  url=$(sed -n 's/^identity-emulator listening on //p' "$log" | head -n 1)
  [ -n "$url" ] && break
  kill -0 "$emulator" 2>/dev/null || { cat "$log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "run: the identity emulator did not start; see $log" >&2; exit 1; }

echo "Identity emulator at $url (log: $log)"
echo "Sign in as alex@contoso.onmicrosoft.com (or megan@…, SMS code shown on the page); password Passw0rd!"
"$bin/sesame" --emulator "$url" "$@"
