#!/usr/bin/env bash
# Installs fieldlog from an existing build dir into a temporary prefix, builds the consumer
# project against it with find_package(fieldlog CONFIG REQUIRED), runs it and checks its line.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S tests/package/consumer -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
line=$("$work/consumer/consumer")
echo "$line"
case "$line" in
  *'"logger":"consumer","msg":"hello from an installed fieldlog","package":"installed","answer":42}') echo "package: ok" ;;
  *) echo "package: unexpected output" >&2; exit 1 ;;
esac
