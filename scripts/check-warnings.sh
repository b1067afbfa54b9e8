#!/usr/bin/env bash
# No compiler warning in Sesame's own code: `make test` keeps its debug build's output and fails
# on a warning about a file under Sources, Tests, Demo or Benchmarks (a warning has hidden a test
# that tested nothing: a weak reference nil at once). Dependencies' warnings are theirs. A build
# shows a file's warnings only when it compiles the file, so a fresh clone's build (CI) sees all.
#
#     scripts/check-warnings.sh BUILD_LOG
set -uo pipefail
log=$1
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$(printf '%s' "$root" | sed 's/[][\.*^$+?(){}|/]/\\&/g')
found=$(grep -aE "^$prefix/(Sources|Tests|Demo|Benchmarks)/[^:]+:[0-9]+:[0-9]+: warning:" "$log" | sort -u)
if [ -n "$found" ]; then
    printf '%s\n' "$found"
    echo "check-warnings: $(printf '%s\n' "$found" | wc -l) compiler warning(s) in Sesame's own code (above): mend each where it points."
    exit 1
fi
