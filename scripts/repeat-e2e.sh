#!/usr/bin/env bash
# `make test-e2e REPEAT=N`: runs the end-to-end flows (EndToEndFlowTests) N times in a row and
# reports every failure with its run, its flow and the step that did not happen. Runs inside
# scripts/test-session.sh (display, D-Bus, keyring) on an already built test bundle.
# Usage: repeat-e2e.sh N [swift test filter]
set -uo pipefail

runs=${1:-1}
filter=${2:-EndToEndFlowTests}
logs=$(mktemp -d "${TMPDIR:-/tmp}/sesame-e2e-repeat.XXXXXX")
failed_runs=0
summary=()

for run in $(seq 1 "$runs"); do
  log="$logs/run-$run.log"
  started=$SECONDS
  swift test --skip-build --filter "$filter" >"$log" 2>&1
  status=$?
  # XCTest's failures: "…: error: EndToEndFlowTests.testX : XCTAssert… - flow NAME: …", and the
  # flow's own line naming the step: "E2E-STEP-FAILED flow=NAME: waited 30 s for …".
  failures=$(grep -E ': error: |E2E-STEP-FAILED' "$log" | sed -E 's/^.*: error: //' | cut -c1-400 | sort -u)
  if [ "$status" -ne 0 ] || [ -n "$failures" ]; then
    failed_runs=$((failed_runs + 1))
    echo "run $run/$runs: FAILED in $((SECONDS - started)) s (log: $log)"
    while IFS= read -r line; do
      [ -n "$line" ] && summary+=("run $run: $line") && echo "  $line"
    done <<<"$failures"
    [ -z "$failures" ] && summary+=("run $run: swift test exited $status with no test failure reported (see $log)")
  else
    executed=$(grep -Eo 'Executed [0-9]+ tests?' "$log" | tail -n 1)
    echo "run $run/$runs: passed in $((SECONDS - started)) s (${executed:-no tests executed})"
  fi
done

echo
if [ "$failed_runs" -eq 0 ]; then
  echo "End-to-end flows: $runs of $runs runs passed."
  rm -rf "$logs"
  exit 0
fi
echo "End-to-end flows: $failed_runs of $runs runs failed:"
printf '  %s\n' "${summary[@]}"
echo "Logs: $logs"
exit 1
