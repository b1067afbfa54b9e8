#!/usr/bin/env bash
# A clean Debian 12 root for `make test-package`, made once with mmdebstrap from the machine's own
# apt mirror and kept in DIR/root until what it is made from changes.
#
#     packaging/test/clean-root.sh DIR      prints the root's path (DIR/root)
#
# The root has Debian's essential packages and apt, plus what the test itself runs: man-db (for
# `man sesame`), Xvfb, python3-selenium and dbus. It has no GTK, no WebKit and no Swift: those the
# package's Depends must bring (webkit2gtk-driver, which would bring WebKit, is installed after the
# package). The test never changes it: each run writes to an overlay on top.
#
# Its key is a hash of this script and the apt sources it copies: a change to either makes a new
# root; a root whose making was interrupted has no key and is made again.
set -euo pipefail

dir=$1
root="$dir/root"
packages=man-db,xvfb,xauth,python3-selenium,dbus
suite=bookworm

# The machine's Debian sources (deb822), else Debian's own mirror.
sources=/etc/apt/sources.list.d/debian.sources
if [ -f "$sources" ]; then
  mirror=("$sources")
else
  mirror=("deb http://deb.debian.org/debian $suite main" "deb http://deb.debian.org/debian $suite-updates main"
          "deb http://deb.debian.org/debian-security $suite-security main")
fi

key=$({ cat "$0"; printf '%s\n' "${mirror[@]}"; [ -f "$sources" ] && cat "$sources"; } | sha256sum | cut -c1-16)
if [ -f "$root/.clean-root-key" ] && [ "$(cat "$root/.clean-root-key")" = "$key" ]; then
  echo "$root"
  exit 0
fi

# Nothing may be mounted inside a root that is about to be deleted.
remove() {
  if [ -e "$1" ]; then
    if findmnt -rn -o TARGET | grep -q "^$(realpath "$1")/"; then
      echo "clean-root: $1 has file systems mounted in it; not deleting it" >&2
      exit 1
    fi
    rm -rf --one-file-system "$1"
  fi
}

echo "clean-root: making a Debian $suite root (key $key) in $root (one to two minutes)" >&2
mkdir -p "$dir"
remove "$root.new"
start=$SECONDS
# Snapshot mirrors serve Release files past their Valid-Until date. The installer writes
# /etc/hosts on a real system (localhost: WebDriver clients connect to it by that name).
mmdebstrap --quiet --variant=apt --include="$packages" \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --customize-hook='printf "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n" >"$1/etc/hosts"' \
  "$suite" "$root.new" "${mirror[@]}" >&2
echo "$key" >"$root.new/.clean-root-key"
remove "$root"
mv "$root.new" "$root"
echo "clean-root: made in $((SECONDS - start)) s" >&2
echo "$root"
