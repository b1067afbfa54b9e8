#!/usr/bin/env bash
# The package's checks, after packaging/build-deb.sh: its AppStream metainfo (appstreamcli, no
# network: the screenshots' host is a placeholder), its desktop entry (desktop-file-validate) and
# lintian, which must report no error (warnings and notes are shown).
#
#     packaging/check-deb.sh STAGE DEB
set -euo pipefail
cd "$(dirname "$0")/.."

stage=$(realpath "$1")
deb=$2

appstreamcli validate --no-net --explain "$stage/usr/share/metainfo/org.sesame.Sesame.metainfo.xml"
desktop-file-validate "$stage/usr/share/applications/org.sesame.Sesame.desktop" && echo "desktop-file-validate: no complaint"
lintian --fail-on error --display-info "$deb" ||
  { echo "make deb: lintian reported errors" >&2; exit 1; }
echo "lintian: no errors"
