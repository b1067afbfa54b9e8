#!/usr/bin/env bash
# Runs a command in a computer where Microsoft is this machine: in a private mount namespace,
# Microsoft's sign-in and Graph host names resolve to ADDRESS (where the identity emulator
# listens as login.microsoftonline.com:443), and the system's trust store also trusts CA_FILE
# (the emulator's CA). Everything the command starts sees the same: MSAL for Python (its requests
# is told REQUESTS_CA_BUNDLE by the caller), pymsalruntime's libcurl (which reads only
# /etc/ssl/certs), WebKit (GnuTLS) and Sesame (BoringSSL).
#
#     microsoft_hosts.sh ADDRESS CA_FILE -- COMMAND [ARGUMENT...]
#
# Needs root (unshare, mount), as `make test` runs. Nothing changes outside the namespace: its
# mounts are private, and the files shown over /etc/hosts and /etc/ssl/certs live on a tmpfs that
# goes with the namespace (its folder in /tmp is removed before COMMAND starts).
set -euo pipefail

if [ "${1:-}" != --inside ]; then
    exec unshare --mount "$0" --inside "$@"
fi
shift
[ $# -ge 4 ] && [ "$3" = -- ] || { echo "usage: $0 ADDRESS CA_FILE -- COMMAND [ARGUMENT...]" >&2; exit 2; }
address=$1 ca=$2
shift 3

# What MSAL, pymsalruntime and Sesame contact: the authority and its aliases, Graph, and the
# device registration service.
names="login.microsoftonline.com login.microsoft.com login.windows.net sts.windows.net graph.microsoft.com enterpriseregistration.windows.net"

mount --make-rprivate /
work=$(mktemp -d "${TMPDIR:-/tmp}/microsoft-hosts.XXXXXX")
mount -t tmpfs -o mode=0755 microsoft-hosts "$work"
{ echo "$address $names"; cat /etc/hosts; } > "$work/hosts"
cp -a /etc/ssl/certs "$work/certs"
rm -f "$work/certs/ca-certificates.crt"
cat /etc/ssl/certs/ca-certificates.crt "$ca" > "$work/certs/ca-certificates.crt"
cp "$ca" "$work/certs/sesame-test-identity-emulator.pem"
# The hash links OpenSSL looks certificates up by in a directory (libcurl's CApath).
openssl rehash "$work/certs" 2>/dev/null
mount --bind "$work/hosts" /etc/hosts
mount --bind "$work/certs" /etc/ssl/certs
# The binds keep the tmpfs alive; its mount point can go.
umount --lazy "$work"
rmdir "$work"
exec "$@"
