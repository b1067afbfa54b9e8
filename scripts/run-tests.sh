#!/usr/bin/env bash
# `make test`'s run, after its debug build: XCTest, with swift-testing and the window's fit at GDK
# scale 2 beside it (their tests are mostly computation, XCTest's mostly waiting for WebKit, the
# emulator and D-Bus: together they take 40 s less), each from the test binary in a private
# session (scripts/test-session.sh), every line kept in LOG (swift-testing's after XCTest's). Not `swift test`: it would wait for SwiftPM's lock on .build while the
# release build below holds it.
#
#     scripts/run-tests.sh BIN_DIR LOG [RELEASE_COMMAND...]
#
# With a RELEASE_COMMAND and root (test-package, which follows, needs both), what test-package
# needs is made meanwhile at the lowest priority: the release programs and their man pages
# (RELEASE_COMMAND: `make release`; .build/release-build.log) and the clean Debian root
# (packaging/test/clean-root.sh; .build/clean-root.log). They take the cores the tests leave idle
# while they wait for WebKit, the emulator and D-Bus, instead of running for minutes after them.
# On a failure, what failed is printed last (scripts/test-failures.sh), since CI keeps only the end.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$1
log=$2
shift 2
tests="$bin/SesamePackageTests.xctest"
: > "$log"

background=()
if [ "$#" -gt 0 ] && [ "$(id -u)" = 0 ]; then
    echo "Meanwhile, at the lowest priority: the release build (.build/release-build.log) and the clean root (.build/clean-root.log)."
    # Each in a process group of its own, so that a failure here ends all of it. (SwiftPM's build
    # system starts its compilers at nice 0 again: the release build takes its share of the cores.)
    # Each says when it ended, counted from the start of the tests (where the time goes: CI keeps the log).
    setsid nice -n 19 bash -c '"$@"; status=$?; echo "run-tests: the release build ended at ${SECONDS} s"; exit $status' \
        release "$@" > .build/release-build.log 2>&1 &
    background+=("$!")
    setsid nice -n 19 bash -c 'packaging/test/clean-root.sh .build/package; status=$?; echo "run-tests: the clean root ended at ${SECONDS} s"; exit $status' \
        > .build/clean-root.log 2>&1 &
    background+=("$!")
fi
stop_background() {
    for job in "${background[@]}"; do kill -- "-$job" 2> /dev/null; done
    wait 2> /dev/null
}
trap 'stop_background; for job in ${testing:-} ${scaled:-}; do kill "$job" 2> /dev/null; done; exit 130' INT TERM

failed=0
testing_log="$log.swift-testing"
scaled_log="$log.scale-2"
scripts/test-session.sh "$tests" --testing-library swift-testing > "$testing_log" 2>&1 &
testing=$!
# GDK_SCALE is read when the display opens: the window's fit at scale 2, in a process (and on a
# display) of its own, beside the rest.
GDK_SCALE=2 SESAME_SCREENSHOTS="$PWD/.build/screenshots/scale-2" scripts/test-session.sh \
    "$tests" SesameGtkTests.DesktopConventionsTests/testTheLongestNamesFitTheWindow > "$scaled_log" 2>&1 &
scaled=$!
scripts/test-session.sh "$tests" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
echo "run-tests: XCTest ended at ${SECONDS} s"
wait "$testing" || failed=1
wait "$scaled" || failed=1
cat "$testing_log" "$scaled_log" | tee -a "$log" > /dev/null
grep -E "Test run with|✘" "$testing_log" | tail -n 20
grep -E "error:|Executed" "$scaled_log" | tail -n 5

# A trap in any program the tests ran (an emulator, a helper, a window) fails the suite, even
# where the test that ran it did not look at its output.
if grep -a -q "Fatal error:" "$log"; then
    echo "run-tests: a program trapped (\"Fatal error:\" in $log):"
    grep -a -m 5 "Fatal error:" "$log"
    failed=1
fi
if [ "$failed" -ne 0 ]; then
    stop_background
    scripts/test-failures.sh "$log"
    exit 1
fi
if [ "${#background[@]}" -gt 0 ]; then
    echo "Waiting for the release build and the clean root…"
    for log_of in "${background[0]}:.build/release-build.log:release build" "${background[1]}:.build/clean-root.log:clean root"; do
        IFS=: read -r job output what <<< "$log_of"
        if ! wait "$job"; then
            stop_background
            tail -n 40 "$output"
            echo "The $what failed ($output)."
            exit 1
        fi
        tail -n 1 "$output"
    done
    echo "run-tests: all ended at ${SECONDS} s"
fi
