#!/usr/bin/env bash
# `make deb`: what `make install DESTDIR=STAGE PREFIX=/usr` installed → a Debian package, checked.
#
#     packaging/build-deb.sh STAGE VERSION DEB
#
# Adds what Debian wants beside the files (/usr/share/doc/sesame: copyright, changelog), strips
# the programs as dh_strip does, computes Depends with dpkg-shlibdeps (from the libraries the
# programs need, and those packages' symbols) and the control file with dpkg-gencontrol
# (packaging/debian/control), then builds the package with dpkg-deb. packaging/check-deb.sh
# checks it (`make deb` runs both).
set -euo pipefail
cd "$(dirname "$0")/.."

stage=$(realpath "$1")
version=$2
deb=$3
package=sesame
work=$(dirname "$deb")/debian-work
metainfo="$stage/usr/share/metainfo/org.sesame.Sesame.metainfo.xml"
maintainer=$(sed -n 's/^Maintainer: *//p' packaging/debian/control)
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}

# The version lives in Sources/SesameSystem/SesameVersion.swift; the metainfo's newest release must be it.
newest=$(sed -n 's/.*<release version="\([^"]*\)".*/\1/p' "$metainfo" | head -1)
if [ "$newest" != "$version" ]; then
  echo "make deb: the metainfo's newest release is '$newest' but SesameVersion.swift says '$version':" \
    "add a <release> to Resources/desktop/org.sesame.Sesame.metainfo.xml" >&2
  exit 1
fi

# Swift's runtime and FoundationEssentials are in libsesame.so (packaging/link-programs.sh): no
# program may need a Swift library of the toolchain's.
binaries=("$stage"/usr/bin/* "$stage"/usr/libexec/sesame/* "$stage"/usr/lib/sesame/libsesame.so.0)
for program in "${binaries[@]}"; do
  needed=$(readelf -d "$program" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  if grep -Eqi 'swift|Foundation|dispatch|BlocksRuntime' <<<"$needed"; then
    echo "make deb: $program needs a Swift library; link it with packaging/link-programs.sh:" $needed >&2
    exit 1
  fi
  strip --remove-section=.comment --remove-section=.note "$program"
done

doc="$stage/usr/share/doc/$package"
install -d "$doc"
install -m 644 packaging/debian/copyright "$doc/copyright"
if [ -f packaging/debian/lintian-overrides ]; then
  install -D -m 644 packaging/debian/lintian-overrides "$stage/usr/share/lintian/overrides/$package"
fi
changelog_date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
changelog="$package ($version) bookworm; urgency=medium

  * Sesame $version. Its release notes are in
    /usr/share/metainfo/org.sesame.Sesame.metainfo.xml.

 -- $maintainer  $changelog_date"
gzip -9n >"$doc/changelog.gz" <<<"$changelog"

# dpkg-shlibdeps and dpkg-gencontrol read ./debian/{control,changelog}.
rm -rf "$work"
mkdir -p "$work/debian"
cp packaging/debian/control "$work/debian/control"
printf '%s\n' "$changelog" >"$work/debian/changelog"
rm -rf "$stage/DEBIAN"
mkdir -p "$stage/DEBIAN"
(
  cd "$work"
  # libsesame.so is the package's own (-l: where the programs find it; no shlibs of its own).
  dpkg-shlibdeps -Tdebian/substvars -l"$stage/usr/lib/sesame" "${binaries[@]/#/-e}"
  dpkg-gencontrol -p"$package" -P"$stage" -Tdebian/substvars
)
(cd "$stage" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums"

rm -f "$deb"
# xz at level 3: a tenth larger than the default 6, in 40 % of its time (26 s → 10.5 s here).
dpkg-deb --root-owner-group -Zxz -z3 --build "$stage" "$deb" >/dev/null
echo "make deb: built $deb"
sed -n 's/^\(Version\|Depends\|Installed-Size\): /  \1: /p' "$stage/DEBIAN/control"
