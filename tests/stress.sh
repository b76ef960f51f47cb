#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs CTest tests over and over on a loaded machine, to find a test that fails now and then:
# a flaky test is a bug. A CPU hog (one busy process per core) runs beside the tests for the
# whole run. Stops at the first failure and says which run and test it was.
#
#   tests/stress.sh N [REGEX]     N runs of the tests whose names match REGEX (default: all),
#                                 from the Release build in build/ (bash .ci/test makes it)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:?usage: tests/stress.sh N [ctest -R regex]}
regex=${2:-.}
[ -d build ] || { echo "no build/: run bash .ci/test first" >&2; exit 2; }

hogs=()
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
for _ in $(seq "$(nproc)"); do
  (while :; do :; done) &
  hogs+=($!)
done

log=$(mktemp)
for run in $(seq "$runs"); do
  if ! ctest --test-dir build -R "$regex" -j"$(nproc)" --timeout 600 >"$log" 2>&1; then
    echo "run $run of $runs failed:"
    grep -E '\*\*\*|Failed|Timeout' "$log" | head -20
    echo "(full output: $log)"
    exit 1
  fi
  tests=$(grep -oE 'out of [0-9]+' "$log" | head -1 | cut -d' ' -f3 || true)
  printf 'run %d of %d passed (%s tests)\n' "$run" "$runs" "${tests:-?}"
done
rm -f "$log"
echo "$runs passed, 0 failed"
