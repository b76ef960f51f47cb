#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds every libFuzzer target in tests/fuzz (each <name>_fuzz.cpp) with clang and runs each one
# for the given number of seconds, starting from its seeds in tests/fuzz/corpus/<name>/. New
# inputs and crash artifacts go to the build directory, never into the source tree.
# Usage: tests/fuzz/run.sh [seconds-per-target=60] [build-dir=build-fuzz]
set -euo pipefail

seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${2:-$root/build-fuzz}
cxx=${FIELDLOG_FUZZ_CXX:-$(command -v clang++ || command -v clang++-14)}

# -O1 with line tables, as libFuzzer's documentation builds: findings keep file:line, the build
# takes less than at -O2 -g.
cmake -S "$root" -B "$build" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DFIELDLOG_FUZZ=ON -DFIELDLOG_BUILD_TESTS=OFF -DFIELDLOG_BUILD_BENCH=OFF -DFIELDLOG_BUILD_EXAMPLES=OFF

targets=()
for source in "$here"/*_fuzz.cpp; do targets+=("$(basename "$source" .cpp)"); done
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

failed=()
for target in "${targets[@]}"; do
  name=${target%_fuzz}
  corpus="$build/fuzz/corpus/$name"
  artifacts="$build/fuzz/artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  echo "== $target: ${seconds}s, seeds from tests/fuzz/corpus/$name"
  if ! "$build/tests/fuzz/$target" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "$here/corpus/$name"; then
    failed+=("$target")
  fi
done

if ((${#failed[@]})); then
  echo "fuzz targets failed: ${failed[*]} (inputs in $build/fuzz/artifacts/)" >&2
  exit 1
fi
echo "all fuzz targets ran ${seconds}s without a finding"
