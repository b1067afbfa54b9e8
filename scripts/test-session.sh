#!/usr/bin/env bash
# Runs a command the way `make test` needs it: on a private virtual display (Xvfb, for the GUI
# tests' real WebKit views), in a private D-Bus session with a freshly unlocked gnome-keyring (a
# real Secret Service for the keyring tests), with HOME-independent XDG directories in a
# temporary folder so that no test touches the user's display, keyring or caches.
set -euo pipefail

scratch=$(mktemp -d "${TMPDIR:-/tmp}/sesame-test-session.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/data" "$scratch/config" "$scratch/cache" "$scratch/state" "$scratch/runtime"
chmod 700 "$scratch/runtime"

export XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config" XDG_CACHE_HOME="$scratch/cache"
export XDG_STATE_HOME="$scratch/state"
export XDG_RUNTIME_DIR="$scratch/runtime"
export SESAME_REQUIRE_SECRET_SERVICE=1
# WebKit's accelerated compositing needs a GPU; Xvfb has none (see docs/COMMAND-LINE.md, "Rendering").
export WEBKIT_DISABLE_COMPOSITING_MODE=1

inner='
  # The password only unlocks this throw-away keyring; it is read from stdin, as gnome-keyring wants.
  printf %s "sesame-test-keyring" | gnome-keyring-daemon --unlock --components=secrets >/dev/null
  # One accessibility bus for the whole session, named in the environment. AT-SPI otherwise finds
  # it through a property of the display, which the launcher of any other bus on the display
  # (the tests start session buses of their own) overwrites, and leaves naming a dead socket
  # when that bus and its launcher are stopped: every AT-SPI client after it fails to connect.
  # gdbus prints the answer as a tuple of one quoted string.
  AT_SPI_BUS_ADDRESS=$(gdbus call --session --dest org.a11y.Bus --object-path /org/a11y/bus \
    --method org.a11y.Bus.GetAddress | sed -e "s/^(.//" -e "s/.,)\$//")
  export AT_SPI_BUS_ADDRESS
  exec "$@"
'
# The session bus is Debian's without the desktop portal (why: test-dbus/session.conf).
exec xvfb-run -a -s "-screen 0 ${SESAME_XVFB_SCREEN:-2560x1600x24}" \
  dbus-run-session --config-file="$(cd "$(dirname "$0")" && pwd)/test-dbus/session.conf" -- bash -c "$inner" bash "$@"
