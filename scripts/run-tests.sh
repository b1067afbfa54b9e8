#!/usr/bin/env bash
# `make test`'s run, after its debug build: XCTest, with swift-testing and a few XCTest classes
# beside it (XCTest mostly waits for WebKit, the emulator and D-Bus), then the window's fit at GDK
# scale 2, each from the test binary in a private session (scripts/test-session.sh), every line
# kept in LOG (what ran beside after the rest). Not `swift test`: it would wait for SwiftPM's lock on .build while the
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
    setsid nice -n 19 "$@" > .build/release-build.log 2>&1 &
    background+=("$!")
    setsid nice -n 19 packaging/test/clean-root.sh .build/package > .build/clean-root.log 2>&1 &
    background+=("$!")
fi
stop_background() {
    for job in "${background[@]}"; do kill -- "-$job" 2> /dev/null; done
    wait 2> /dev/null
}
trap 'stop_background; [ -n "${testing:-}" ] && kill "$testing" 2> /dev/null; exit 130' INT TERM

failed=0
# Beside the XCTest run, in a session of its own: swift-testing, then the command line's servers
# (Dovecot, the company's proxy: about two minutes of waiting). Fewer would leave the release build
# the tail; more would take its cores (the work is CPU-bound: about 21 CPU-minutes on two cores).
beside="SesameCLITests.MailTests,SesameCLITests.CompanyNetworkTests,SesameCLITests.DoctorAtWorkTests"
classes=$("$tests" --list-tests 2> /dev/null | sed -n 's|^\([A-Za-z]*Tests\.[A-Za-z]*\)/.*|\1|p' | sort -u)
for class in ${beside//,/ }; do
    grep -qx "$class" <<< "$classes" || { echo "run-tests: $tests has no XCTest class $class" >&2; exit 1; }
done
main=$(grep -vxF -f <(tr , '\n' <<< "$beside") <<< "$classes" | paste -sd, -)
[ -n "$main" ] || { echo "run-tests: $tests lists no XCTest class" >&2; exit 1; }
beside_log="$log.beside"
(
    beside_failed=0
    scripts/test-session.sh "$tests" --testing-library swift-testing > "$beside_log" 2>&1 || beside_failed=1
    scripts/test-session.sh "$tests" "$beside" >> "$beside_log" 2>&1 || beside_failed=1
    exit "$beside_failed"
) &
testing=$!
scripts/test-session.sh "$tests" "$main" 2>&1 | tee -a "$log"
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
wait "$testing" || failed=1
cat "$beside_log" >> "$log"
grep -E "Executed .* tests?, with|Test run with|✘" "$beside_log" | tail -n 20
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
