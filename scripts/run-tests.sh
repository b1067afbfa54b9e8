#!/usr/bin/env bash
# `make test`'s run, after its debug build, from the test binary in private sessions
# (scripts/test-session.sh), two side by side: the window's XCTest classes (WebKit, AT-SPI); and
# the command line's (processes, mail servers, proxies), then swift-testing. Both mostly wait — for
# WebKit, the emulator, D-Bus — so together they take minutes less than one after the other. Then
# the window's fit at GDK scale 2. Every line is kept in LOG (the command line's after the window's). Not `swift test`: it would wait for SwiftPM's lock on .build while the
# release build below holds it.
#
#     scripts/run-tests.sh BIN_DIR LOG BUILD_COMMAND [RELEASE_COMMAND...]
#
# BUILD_COMMAND (one string: the debug build of the tests) runs first. With a RELEASE_COMMAND and
# root (test-package, which follows, needs both), what test-package needs is made beside it from
# the start, at the lowest priority: the release programs and their man pages (RELEASE_COMMAND:
# `make release`, in a scratch folder of its own; .build/release-build.log) and the clean Debian
# root (packaging/test/clean-root.sh; .build/clean-root.log). They take the cores the debug build's
# links and the tests' waits for WebKit, the emulator and D-Bus leave idle, instead of running for
# minutes after them.
# On a failure, what failed is printed last (scripts/test-failures.sh), since CI keeps only the end.
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$1
log=$2
build=$3
shift 3
tests="$bin/SesamePackageTests.xctest"
: > "$log"

background=()
if [ "$#" -gt 0 ] && [ "$(id -u)" = 0 ]; then
    echo "Meanwhile, at the lowest priority: the release build (.build/release-build.log) and the clean root (.build/clean-root.log)."
    # Each in a process group of its own, so that a failure here ends all of it. SCHED_IDLE, not
    # only nice: SwiftPM's build system starts its compilers at nice 0 again, but keeps the policy.
    setsid chrt --idle 0 nice -n 19 "$@" > .build/release-build.log 2>&1 &
    background+=("$!")
    setsid chrt --idle 0 nice -n 19 packaging/test/clean-root.sh .build/package > .build/clean-root.log 2>&1 &
    background+=("$!")
fi
stop_background() {
    for job in "${background[@]}"; do kill -- "-$job" 2> /dev/null; done
    wait 2> /dev/null
}
trap 'stop_background; [ -n "${testing:-}" ] && kill "$testing" 2> /dev/null; exit 130' INT TERM

if ! bash -c "$build"; then
    stop_background
    echo "The debug build failed."
    exit 1
fi

failed=0
# Every XCTest class, in one of the two shards.
classes=$("$tests" --list-tests 2> /dev/null | sed -n 's|^\([A-Za-z]*Tests\.[A-Za-z]*\)/.*|\1|p' | sort -u)
[ -n "$classes" ] || { echo "run-tests: $tests lists no XCTest class" >&2; exit 1; }
command_line=$(grep '^SesameCLITests\.' <<< "$classes" | paste -sd, -)
windows=$(grep -v '^SesameCLITests\.' <<< "$classes" | paste -sd, -)
shard_log="$log.command-line"
(
    shard_failed=0
    scripts/test-session.sh "$tests" "$command_line" > "$shard_log" 2>&1 || shard_failed=1
    scripts/test-session.sh "$tests" --testing-library swift-testing >> "$shard_log" 2>&1 || shard_failed=1
    exit "$shard_failed"
) &
testing=$!
scripts/test-session.sh "$tests" "$windows" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
wait "$testing" || failed=1
cat "$shard_log" >> "$log"
grep -E "Executed .* tests?, with|Test run with|✘|error:" "$shard_log" | tail -n 20
# GDK_SCALE is read when the display opens: the window's fit at scale 2, in a process of its own.
GDK_SCALE=2 SESAME_SCREENSHOTS="$PWD/.build/screenshots/scale-2" scripts/test-session.sh \
    "$tests" SesameGtkTests.DesktopConventionsTests/testTheLongestNamesFitTheWindow 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1

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
    done
fi
