#!/usr/bin/env bash
# `make test`'s run, after its debug build: XCTest, then swift-testing, then the window's fit at
# GDK scale 2, each from the test binary in a private session (scripts/test-session.sh), every
# line kept in LOG. Not `swift test`: it would wait for SwiftPM's lock on .build while the
# release build below holds it.
#
#     scripts/run-tests.sh BIN_DIR LOG [RELEASE_BUILD_COMMAND...]
#
# With a RELEASE_BUILD_COMMAND and root (test-package, which follows, needs both), the package's
# release build runs meanwhile at the lowest priority (its output in .build/release-build.log):
# it takes the cores the tests leave idle while they wait for WebKit, the emulator and D-Bus,
# instead of running for minutes after them. On a failure, what failed is printed last
# (scripts/test-failures.sh), since CI keeps only the end.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$1
log=$2
shift 2
tests="$bin/SesamePackageTests.xctest"
: > "$log"

release=""
if [ "$#" -gt 0 ] && [ "$(id -u)" = 0 ]; then
    echo "The release build for test-package runs meanwhile, at the lowest priority (.build/release-build.log)."
    # A process group of its own, so that a failure here ends the whole build.
    setsid nice -n 19 "$@" > .build/release-build.log 2>&1 &
    release=$!
fi
stop_release() {
    if [ -n "$release" ]; then kill -- "-$release" 2> /dev/null; wait "$release" 2> /dev/null; fi
}
trap 'stop_release; exit 130' INT TERM

failed=0
scripts/test-session.sh "$tests" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
scripts/test-session.sh "$tests" --testing-library swift-testing 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
# GDK_SCALE is read when the display opens: the window's fit at scale 2, in a process of its own.
GDK_SCALE=2 SESAME_SCREENSHOTS="$PWD/.build/screenshots/scale-2" scripts/test-session.sh \
    "$tests" SesameGtkTests.DesktopConventionsTests/testTheLongestNamesFitTheWindow 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

if [ "$failed" -ne 0 ]; then
    stop_release
    scripts/test-failures.sh "$log"
    exit 1
fi
if [ -n "$release" ]; then
    echo "Waiting for the release build…"
    if ! wait "$release"; then
        tail -n 40 .build/release-build.log
        echo "The release build failed (.build/release-build.log)."
        exit 1
    fi
fi
