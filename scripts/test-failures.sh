#!/usr/bin/env bash
# What failed, in the last lines of the output: CI keeps only the end of what `make test` printed,
# and a failing XCTest case is otherwise thousands of lines above swift-testing's summary.
#
#     scripts/test-failures.sh LOG
#
# Prints XCTest's failed cases and their assertion lines, swift-testing's failed tests and issues,
# and crashes, at most 14 of them, each shortened to 300 characters.
set -uo pipefail
log=$1
echo "---- what failed (from $log) ----"
# swift-testing colours its symbols (ANSI escapes between "✘" and the text) when run directly.
plain() { sed 's/\x1b\[[0-9;]*m//g' "$log"; }
plain | grep -a -E "Test Case '.*' failed|: error: |✘ |Fatal error|Program crashed|Exited with (unexpected )?signal|Test Suite '.*' failed" |
  grep -a -v "^✘ Test run with" | cut -c1-300 | awk '!seen[$0]++' | tail -n 14
# Each XCTest run's total (the whole suite's, and a run of selected tests'), then swift-testing's.
plain | awk "/^Test Suite '(All tests|Selected tests)' (passed|failed)/ { getline; print }"
plain | grep -a -E "^✘ Test run with" | tail -n 1
echo "---- end of what failed ----"
