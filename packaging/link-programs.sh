#!/usr/bin/env bash
# `make release`: Sesame's programs as installed, sharing one copy of Swift's runtime.
#
#     packaging/link-programs.sh RELEASE_BIN OUT
#
# RELEASE_BIN is a release build (`swift build -c release --static-swift-stdlib`) of the products
# sesame, sesame-window, sesame-service, identity-emulator and git-credential-sesame. SwiftPM links
# each program with its own static copy of the runtime, FoundationEssentials, swift-nio and
# BoringSSL (about 30 MB apiece); this links the same object files again as OUT, a prefix's tree:
#
#     lib/sesame/libsesame.so.0      the runtime (linked in statically: no libswift*.so needed) and
#                                    everything the programs share; no GTK, no WebKit
#     bin/sesame                     the command line, or the window (sesame.c: which, from the
#                                    first argument, before loading anything)
#     bin/identity-emulator          the emulator: a few kB, main() calls its entry in the library
#     libexec/sesame/sesame-service  the account service
#     libexec/sesame/sesame-window   the window: its own code (SesameGtk, the samples) linked
#                                    against the library, GTK and WebKit
#     bin/git-credential-sesame      SwiftPM's static program, as before: git starts it for each
#                                    fetch, and it needs neither the Core nor the library's libraries
#
# Each program finds libsesame.so.0 through its RUNPATH, relative to itself ($ORIGIN), so the tree
# works where it was built (`make bench`) and under any prefix. docs/INSTALL.md says why this shape.
set -euo pipefail
cd "$(dirname "$0")/.."

release=$(realpath "$1")
out=$2
work=$out/.link
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/sesame" "$out/libexec/sesame" "$work"

toolchain=$(dirname "$(dirname "$(realpath "$(command -v swiftc)")")")
swiftrt=$toolchain/lib/swift/linux/$(uname -m)/swiftrt.o
objects() { cat "$release/$1.product/Objects.LinkFileList"; }
# What the three programs link (their modules and every dependency), and the window's own part.
{ objects sesame; objects sesame-service; objects identity-emulator; } | sort -u >"$work/shared.list"
objects sesame-window | sort -u | comm -23 - "$work/shared.list" >"$work/window.list"

# The window needs from the library what its own objects use but do not define: Swift's symbols
# (the runtime's and the shared modules') and the shared C modules' functions. EXTERN makes the
# library pull them out of the runtime's archives; the version script exports them, the programs'
# entry points and nothing else (every other symbol stays local, for --gc-sections and a short
# dynamic symbol table).
xargs nm --defined-only --format=just-symbols <"$work/window.list" 2>/dev/null | sort -u >"$work/window.defined"
{ cat "$work/window.list"; echo "$swiftrt"; } | xargs nm --undefined-only --format=just-symbols 2>/dev/null | sort -u | comm -23 - "$work/window.defined" >"$work/window.undefined"
xargs nm --defined-only --extern-only --format=just-symbols <"$work/shared.list" 2>/dev/null | sort -u >"$work/shared.defined"
{
  grep -E '^(\$s|\$e|_?swift_|_swift)' "$work/window.undefined" || true
  comm -12 "$work/window.undefined" "$work/shared.defined"
} | sort -u >"$work/exports"
entries=(sesame_main sesame_service_main identity_emulator_main)
{
  printf 'EXTERN(\n'
  sed 's/.*/  "&"/' "$work/exports"
  printf ')\n'
} >"$work/extern.ld"
{
  printf '{\n  global:\n'
  printf '    %s;\n' "${entries[@]}"
  sed 's/.*/    "&";/' "$work/exports"
  printf '  local: *;\n};\n'
} >"$work/exports.map"

# -Bsymbolic and RELR: the library's own references resolve when it is linked, not by the dynamic
# loader at each start (its symbol look-ups were most of a dynamically linked start: INSTALL.md).
common_link=(-fuse-ld=lld -Wl,-z,pack-relative-relocs -Wl,--gc-sections -Wl,-z,relro,-z,now -Wl,--build-id=none)
# As `swiftc -static-stdlib` links (its static-stdlib-args.lnk), but without --exclude-libs=ALL,
# which would keep the runtime's symbols from the window; the libraries the objects ask for
# (swift-autolink-extract) and the TPM's (Package.swift's linker settings).
swift-autolink-extract @"$work/shared.list" -o "$work/autolink"
clang -shared -o "$out/lib/sesame/libsesame.so.0" "$swiftrt" @"$work/shared.list" "$work/extern.ld" \
  -L"$toolchain/lib/swift_static/linux" $(sort -u "$work/autolink") -lstdc++ -ltss2-esys -ltss2-mu -ltss2-tctildr -ltss2-rc \
  -Wl,-soname=libsesame.so.0 -Wl,-Bsymbolic -Wl,-z,defs -Wl,--version-script="$work/exports.map" -Wl,--undefined-version \
  "${common_link[@]}"

# The thin programs: main() is the program's entry point (SwiftPM names it <module>_main).
program() { # NAME ENTRY FOLDER RUNPATH
  clang -O2 -DENTRY="$2" -o "$out/$3/$1" packaging/program.c "$out/lib/sesame/libsesame.so.0" \
    -Wl,-rpath,"$4" -Wl,--enable-new-dtags "${common_link[@]}"
}
# `sesame` decides between the window and the command line before loading anything (sesame.c).
clang -O2 -o "$out/bin/sesame" packaging/sesame.c -Wl,-rpath,'$ORIGIN/../lib/sesame' -Wl,--enable-new-dtags "${common_link[@]}"
program identity-emulator identity_emulator_main bin '$ORIGIN/../lib/sesame'
program sesame-service sesame_service_main libexec/sesame '$ORIGIN/../../lib/sesame'

# The window: its objects, Swift's image registration (swiftrt.o, as every Swift program and
# library has), libsesame.so.0, GTK and WebKit. No exported symbols (bench: 10–15 ms of each launch).
clang -o "$out/libexec/sesame/sesame-window" "$swiftrt" @"$work/window.list" "$out/lib/sesame/libsesame.so.0" \
  -Wl,--as-needed $(pkg-config --libs webkit2gtk-4.1 gtk+-3.0 gio-unix-2.0) -lm -Wl,--no-as-needed \
  -Wl,--defsym,main=sesame_window_main -Wl,--no-export-dynamic \
  -Wl,-rpath,'$ORIGIN/../../lib/sesame' -Wl,--enable-new-dtags "${common_link[@]}"

install -m 755 "$release/git-credential-sesame" "$out/bin/"
rm -rf "$work"
