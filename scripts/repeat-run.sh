#!/usr/bin/env bash
# `make run` N times in a row on a busy machine: every core kept busy twice over by spinning
# shells while it runs. Each time the window must open on the demo's sign-in page (its trace says
# window-shown and page-loaded) within 60 s; it is then closed (SIGTERM to the run's process
# group). Prints one line per run and the tally; fails if any run did not open the window.
# Usage: xvfb-run -a scripts/repeat-run.sh [N]   (N defaults to 50)
set -euo pipefail
runs=${1:-50}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/sesame-repeat-run.XXXXXX")
hogs=()
cleanup() {
  for pid in "${hogs[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
export XDG_STATE_HOME="$scratch/state" XDG_DATA_HOME="$scratch/data" XDG_CONFIG_HOME="$scratch/config"
make -s build >/dev/null
for _ in $(seq 1 $(($(nproc) * 2))); do
  (while :; do :; done) &
  hogs+=($!)
done
echo "$(($(nproc) * 2)) spinning shells on $(nproc) cores"
opened=0
for run in $(seq 1 "$runs"); do
  trace="$scratch/trace-$run.jsonl"
  start=$(date +%s%N)
  setsid make -s run ARGS="--trace-events $trace" >"$scratch/run-$run.log" 2>&1 &
  runner=$!
  ok=""
  for _ in $(seq 1 600); do
    if grep -q '"window-shown"' "$trace" 2>/dev/null && grep -q '"page-loaded"' "$trace" 2>/dev/null; then
      ok=1
      break
    fi
    kill -0 "$runner" 2>/dev/null || break
    sleep 0.1
  done
  took=$((($(date +%s%N) - start) / 1000000))
  kill -TERM -- "-$runner" 2>/dev/null || true
  wait "$runner" 2>/dev/null || true
  if [ -n "$ok" ]; then
    opened=$((opened + 1))
    echo "run $run: the window opened on the sign-in page in $took ms"
  else
    echo "run $run: NO WINDOW after $took ms; its output:"
    sed 's/^/    /' "$scratch/run-$run.log"
  fi
done
echo "$opened of $runs runs opened the window"
[ "$opened" -eq "$runs" ]
