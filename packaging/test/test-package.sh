#!/usr/bin/env bash
# `make test-package`: the .deb on a clean Debian 12 system, as a user gets it.
#
#     packaging/test/test-package.sh sesame_VERSION_ARCH.deb VERSION
#
# In a clean root (clean-root.sh, cached in .build/package/root) under an overlay of this run's
# own, chrooted, with no Swift toolchain and no source tree: `apt-get install ./sesame_*.deb`
# (without Recommends: Depends alone must bring every library), every library found (ldd),
# `sesame --version`, `man sesame` and `man identity-emulator`, the completions, `sesame accounts`,
# the emulator; then webkit2gtk-driver, and a whole sign-in through the installed window under
# Xvfb (sign_in.py); then `apt-get purge sesame`, after which dpkg knows nothing of it and no file
# of it, nor any new file named after it, is left.
#
# It runs in namespaces of its own: a mount namespace (every mount is gone when it ends, however
# it ends; they are also unmounted on exit), a PID namespace (no process it started outlives it)
# and, for the sign-in, a network namespace (its own loopback: no port or X display shared with
# anything else on the machine). The overlay keeps the cached root untouched; downloaded .debs are
# kept in .build/package/apt-archives for the next run.
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" != 0 ]; then
  echo "test-package: SKIPPED: the clean-root test needs root (chroot, mounts, namespaces); CI runs it as root;" \
    "run it with: sudo make test-package" >&2
  exit 0
fi

deb=$(realpath "$1")
version=$2
work=$(pwd)/.build/package
run="$work/run"
here=$(pwd)/packaging/test

if [ "${SESAME_TEST_PACKAGE_INSIDE:-}" != 1 ]; then
  start=$SECONDS
  root=$("$here/clean-root.sh" "$work")
  echo "test-package: clean root ready ($((SECONDS - start)) s): $root"
  SESAME_TEST_PACKAGE_INSIDE=1 SESAME_TEST_PACKAGE_ROOT=$root SESAME_TEST_PACKAGE_START=$(date +%s) \
    exec unshare --mount --propagation private --pid --fork --mount-proc -- "$0" "$@"
fi

root=$SESAME_TEST_PACKAGE_ROOT
elapsed() { echo "$((SECONDS - step_start)) s"; }
fail() { echo "test-package: FAILED: $*" >&2; exit 1; }

# A run's folder holds nothing mounted when it is deleted (the previous run's namespace is gone).
if findmnt -rn -o TARGET | grep -q "^$run/"; then fail "$run has file systems mounted in it"; fi
rm -rf --one-file-system "$run"
mkdir -p "$run/upper" "$run/work" "$run/root" "$work/apt-archives/partial"
r="$run/root"

mounted=()
mount_at() { # mount_at TARGET mount-arguments…
  local target=$1
  shift
  mount "$@" "$target"
  mounted=("$target" "${mounted[@]}")
}
cleanup() {
  local status=$?
  # What the app and the emulator wrote, for a failure's diagnosis.
  if [ "$status" != 0 ] && [ -d "$r/tmp/sesame-test" ]; then
    rm -rf "$work/last-failure"
    cp -a "$r/tmp/sesame-test" "$work/last-failure" 2>/dev/null || true
    echo "test-package: the app's trace and data are in $work/last-failure" >&2
  fi
  # This script is the first process of its own PID namespace: whatever it started and is still
  # running (an app a failed step left behind) ends here, before its files are unmounted.
  if [ "$$" = 1 ]; then kill -KILL -1 2>/dev/null || true; fi
  for target in "${mounted[@]}"; do umount "$target" || umount -l "$target" || true; done
  if [ "$status" = 0 ]; then rm -rf --one-file-system "$run"; fi
  exit "$status"
}
trap cleanup EXIT

mount_at "$r" -t overlay overlay -o "lowerdir=$root,upperdir=$run/upper,workdir=$run/work"
mount_at "$r/proc" -t proc proc
mount_at "$r/dev/pts" -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts
mount_at "$r/dev/ptmx" --bind "$r/dev/pts/ptmx"
mount_at "$r/dev/shm" -t tmpfs -o mode=1777 tmpfs
mount_at "$r/tmp" -t tmpfs -o mode=1777 tmpfs
mount_at "$r/etc/resolv.conf" --bind /etc/resolv.conf
mount_at "$r/var/cache/apt/archives" --bind "$work/apt-archives"

in_root() { chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp/home LANG=C.UTF-8 \
  DEBIAN_FRONTEND=noninteractive "$@"; }

# Not a booted system: packages' maintainer scripts start no service.
printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d"
chmod 755 "$r/usr/sbin/policy-rc.d"
mkdir -p "$r/tmp/home" "$r/tmp/sesame-test"
cp "$deb" "$r/tmp/"
cp "$here/sign_in.py" "$r/tmp/sesame-test/"
# What the install and the app create changes status after this (dpkg keeps the .deb's mtimes,
# so find compares status changes, -cnewer); nanoseconds tell them apart.
touch "$r/tmp/before-install"

step_start=$SECONDS
in_root apt-get update -qq
in_root apt-get install -y -qq --no-install-recommends "/tmp/$(basename "$deb")" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "apt-get install ./$(basename "$deb")"; }
echo "test-package: apt-get install ./$(basename "$deb") ($(elapsed)): $(grep -c '^Setting up' "$work/install.log") packages set up"
[ -z "$(in_root sh -c 'ls -d /opt/swift /usr/lib/swift /usr/lib/*/libswiftCore.so* 2>/dev/null')" ] ||
  fail "a Swift runtime is present in the root"

# Every library the programs need is there, and none is Swift's.
for program in /usr/bin/sesame /usr/libexec/sesame/sesame-window /usr/libexec/sesame/sesame-service /usr/bin/identity-emulator \
  /usr/bin/git-credential-sesame; do
  libraries=$(in_root ldd "$program")
  if grep -q "not found" <<<"$libraries"; then fail "$program: $(grep 'not found' <<<"$libraries")"; fi
  if grep -qi "swift\|libFoundation\|libdispatch" <<<"$libraries"; then fail "$program links a Swift library: $libraries"; fi
done
echo "test-package: ldd: every library found, none of Swift's"

printed=$(in_root sesame --version)
[ "$printed" = "$version" ] || fail "sesame --version printed '$printed', not '$version'"
echo "test-package: sesame --version: $printed"
# The service D-Bus activation runs and the command line (`sesame token` on every mail sync) load
# no GTK and no WebKit (they stay in the window).
for program in /usr/libexec/sesame/sesame-service /usr/bin/sesame; do
  libraries=$(in_root ldd "$program")
  if grep -q "libgtk\|libwebkit" <<<"$libraries"; then fail "$program links GTK or WebKit: $libraries"; fi
done
# `sesame` itself chooses between the window and the command line (packaging/sesame.c): every
# command its help lists runs without GTK (the dynamic loader's own account of what it loads).
commands=$(in_root sesame --help | sed -n '/^SUBCOMMANDS:/,/^$/s/^  \([a-z-]\+\) .*/\1/p')
[ -n "$commands" ] || fail "sesame --help lists no command"
for command in $commands; do
  loaded=$(in_root env LD_DEBUG=files sesame "$command" --help 2>&1 >/dev/null | grep -o 'file=lib[a-z0-9_.+-]*' | sort -u)
  grep -q "file=libsesame" <<<"$loaded" || fail "sesame $command --help did not load libsesame.so.0: $loaded"
  if grep -q "libgtk\|libwebkit" <<<"$loaded"; then fail "sesame $command loads GTK or WebKit: $loaded"; fi
done
echo "test-package: sesame's commands without a window load no GTK:" $commands
printed=$(in_root /usr/libexec/sesame/sesame-service --version)
[ "$printed" = "$version" ] || fail "sesame-service --version printed '$printed', not '$version'"

for page in sesame identity-emulator git-credential-sesame; do
  text=$(in_root env MANWIDTH=100 man -P cat "$page" 2>&1) || fail "man $page: $text"
  grep -q "^NAME" <<<"$text" && grep -q "$page" <<<"$text" || fail "man $page shows no NAME section: $text"
done
manual=$(in_root env MANWIDTH=100 man -P cat sesame)
for subcommand in window login accounts token signout doctor; do
  grep -qw "$subcommand" <<<"$manual" || fail "man sesame does not describe the subcommand $subcommand"
done
echo "test-package: man sesame, man identity-emulator: $(in_root env MANWIDTH=100 man -P cat sesame | sed -n '/^NAME/{n;s/^ *//;p;q}')"

in_root bash -c '. /usr/share/bash-completion/completions/sesame && complete -p sesame' >/dev/null ||
  fail "bash completion for sesame not loadable"
for file in /usr/share/zsh/vendor-completions/_sesame /usr/share/fish/vendor_completions.d/sesame.fish \
  /usr/share/metainfo/org.sesame.Sesame.metainfo.xml /usr/share/applications/org.sesame.Sesame.desktop \
  /usr/share/icons/hicolor/scalable/apps/org.sesame.Sesame.svg /usr/share/icons/hicolor/symbolic/apps/org.sesame.Sesame-symbolic.svg \
  /usr/share/locale/es/LC_MESSAGES/sesame.mo /usr/share/sesame/settings/directory.plist \
  /usr/share/dbus-1/services/org.sesame.Sesame.service /usr/share/sesame/dbus-1/com.microsoft.identity.broker1.service; do
  [ -f "$r$file" ] || fail "$file not installed"
done
grep -qx 'Exec=/usr/bin/sesame --service' "$r/usr/share/dbus-1/services/org.sesame.Sesame.service" ||
  fail "the D-Bus activation file does not start /usr/bin/sesame --service"
echo "test-package: completions, desktop entry, metainfo, icons, translations, settings and D-Bus activation installed"

accounts=$(in_root env XDG_DATA_HOME=/tmp/sesame-test/accounts-data sesame accounts 2>&1) || fail "sesame accounts: $accounts"
grep -q "no account signed in" <<<"$accounts" || fail "sesame accounts printed: $accounts"
echo "test-package: sesame accounts reads the bundled settings (property lists, FoundationEssentials) and says: no account signed in"

emulator_help=$(in_root identity-emulator --help) || fail "identity-emulator --help"
grep -q "USAGE: identity-emulator" <<<"$emulator_help" || fail "identity-emulator --help printed: $emulator_help"

step_start=$SECONDS
in_root apt-get install -y -qq --no-install-recommends webkit2gtk-driver >"$work/driver.log" 2>&1 ||
  { cat "$work/driver.log"; fail "apt-get install webkit2gtk-driver"; }
echo "test-package: apt-get install webkit2gtk-driver ($(elapsed))"

# The sign-in: its own network namespace (loopback only), a session bus with no keyring in it (the
# tokens go to files in the scratch folder).
step_start=$SECONDS
unshare --net -- bash -c 'ip link set lo up && exec "$@"' sign-in \
  chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp/home LANG=C.UTF-8 \
  dbus-run-session -- python3 /tmp/sesame-test/sign_in.py /tmp/sesame-test ||
  fail "the sign-in through the installed app"
echo "test-package: a whole sign-in through the installed app ($(elapsed))"

# Purge: dpkg forgets the package, and nothing of it is left.
files=$(in_root dpkg-query -L sesame)
step_start=$SECONDS
purge=$(in_root apt-get purge -y -qq sesame 2>&1) || fail "apt-get purge sesame: $purge"
if grep -qi "warning\|error" <<<"$purge"; then fail "apt-get purge sesame said: $purge"; fi
in_root dpkg-query -L sesame >/dev/null 2>&1 && fail "dpkg still lists sesame's files after the purge"
[ -z "$(in_root dpkg-query -W -f='${db:Status-Status}' sesame 2>/dev/null)" ] || fail "dpkg still knows sesame"
left=()
while IFS= read -r path; do
  # Folders that other packages share (/usr/bin, /usr/share/man/man1, …) stay; files must not.
  if [ -e "$r$path" ] && ! [ -d "$r$path" ]; then left+=("$path"); fi
  if [ -d "$r$path" ] && [[ "$path" == *sesame* ]]; then left+=("$path"); fi
done <<<"$files"
[ "${#left[@]}" = 0 ] || fail "left after the purge: ${left[*]}"
named=$(in_root find / -xdev -cnewer /tmp/before-install \( -iname '*sesame*' -o -iname '*identity-emulator*' \) -print)
[ -z "$named" ] || fail "new files named after the package are left after the purge: $named"
echo "test-package: apt-get purge sesame ($(elapsed)): dpkg knows nothing of it; none of its $(wc -l <<<"$files") paths left"
echo "test-package: OK ($(($(date +%s) - SESAME_TEST_PACKAGE_START)) s in the clean root)"
