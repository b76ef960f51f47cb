#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed package, both variants. Installs the static build in $1 (default `build`; made
# if missing) and a shared build (library only, in build-pkg-shared, reused between runs) into
# temporary prefixes; then for each builds and runs the CMake consumer (find_package), a plain
# `c++ … $(pkg-config --cflags --libs fieldlog)` consumer and a dlopen()ed plugin, and checks
# their lines (and a consumer's exit status: its test observer kept the record). One line per
# check; exits non-zero if any failed.
# The checks are functions that check() runs: shellcheck cannot see them called.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
static_build=${1:-build}
shared_build=${FIELDLOG_PKG_SHARED_BUILD:-build-pkg-shared}
cxx=${CXX:-c++}
jobs=$(nproc)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

consumer_line='"logger":"consumer","msg":"hello from an installed fieldlog","package":"installed","answer":42}'
plugin_line() { echo "\"logger\":\"plugin\",\"msg\":\"hello from a plugin\",\"plugin\":\"$1\",\"answer\":42}"; }

failed=0
# check NAME COMMAND...: runs the command in a subshell with `set -e` in force (a function
# called as an `if` condition would run with -e off), prints "package: NAME ok" or FAILED
# followed by what it printed.
check() {
  local name=$1
  shift
  ("$@") >"$work/check.log" 2>&1 &
  if wait $!; then
    echo "package: $name ok"
  else
    echo "package: $name FAILED"
    sed 's/^/    /' "$work/check.log"
    failed=1
  fi
}

# expect_lines OUTPUT SUFFIX...: OUTPUT has exactly one line per SUFFIX, in order, each ending so.
expect_lines() {
  local output=$1
  shift
  local count
  count=$(printf '%s\n' "$output" | wc -l)
  [ "$count" -eq $# ] || { echo "expected $# lines, got $count:"; echo "$output"; return 1; }
  local i=1 suffix line
  for suffix in "$@"; do
    line=$(printf '%s\n' "$output" | sed -n "${i}p")
    case "$line" in
      *"$suffix") ;;
      *) echo "line $i: $line"; echo "expected it to end with: $suffix"; return 1 ;;
    esac
    i=$((i + 1))
  done
}

build_static() {
  if [ ! -f "$static_build/CMakeCache.txt" ]; then
    cmake -S . -B "$static_build" -DFIELDLOG_BUILD_TESTS=OFF -DFIELDLOG_BUILD_BENCH=OFF \
      -DFIELDLOG_BUILD_EXAMPLES=OFF >/dev/null
  fi
  if grep -q '^BUILD_SHARED_LIBS:BOOL=ON' "$static_build/CMakeCache.txt"; then
    echo "$static_build is a shared build; give a static one"
    return 1
  fi
  cmake --build "$static_build" --target fieldlog -j"$jobs" >/dev/null
  cmake --install "$static_build" --prefix "$work/static" >/dev/null
}

build_shared() {
  cmake -S . -B "$shared_build" -DBUILD_SHARED_LIBS=ON -DFIELDLOG_BUILD_TESTS=OFF \
    -DFIELDLOG_BUILD_BENCH=OFF -DFIELDLOG_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$shared_build" --target fieldlog -j"$jobs" >/dev/null
  cmake --install "$shared_build" --prefix "$work/shared" >/dev/null
}

libdir_of() { dirname "$(find "$work/$1" -name 'libfieldlog.*' -print -quit)"; }
pkg_config() { PKG_CONFIG_PATH="$(libdir_of "$1")/pkgconfig" pkg-config "${@:2}"; }

# has OUTPUT PATTERN: OUTPUT has a line matching PATTERN. The tools' output is captured first:
# `tool | grep -q` under pipefail fails when grep exits at the first match and the tool, still
# writing, dies of SIGPIPE.
has() { grep -q -- "$2" <<<"$1"; }

# The library file itself: SONAME libfieldlog.so.0, and nothing but fieldlog:: exported.
shared_library() {
  local lib dynamic
  lib="$(libdir_of shared)/libfieldlog.so.0"
  dynamic=$(readelf -d "$lib")
  has "$dynamic" 'SONAME.*\[libfieldlog\.so\.0\]' || { echo "$dynamic"; return 1; }
  local foreign
  foreign=$(nm -D --defined-only "$lib" | c++filt | cut -d' ' -f3- |
    grep -Ev '^(fieldlog::|typeinfo for fieldlog::|typeinfo name for fieldlog::|vtable for fieldlog::)' || true)
  [ -z "$foreign" ] || { echo "exported besides fieldlog's API:"; echo "$foreign"; return 1; }
}

# Its program depends on libfieldlog.so.0 and finds it in the install prefix.
links_shared() {
  local dynamic resolved
  dynamic=$(readelf -d "$1")
  has "$dynamic" 'NEEDED.*\[libfieldlog\.so\.0\]' || { echo "$dynamic"; return 1; }
  resolved=$(ldd "$1")
  has "$resolved" "libfieldlog\.so\.0 => $work/shared/" || { echo "$resolved"; return 1; }
}

cmake_consumer() {
  local variant=$1
  cmake -S tests/package/consumer -B "$work/$variant-consumer" -DCMAKE_PREFIX_PATH="$work/$variant" >/dev/null
  cmake --build "$work/$variant-consumer" >/dev/null
  if [ "$variant" = shared ]; then links_shared "$work/$variant-consumer/consumer"; fi
  local out
  out=$("$work/$variant-consumer/consumer")
  expect_lines "$out" "$consumer_line"
}

pkgconfig_consumer() {
  local variant=$1 libdir
  libdir=$(libdir_of "$variant")
  # The line a user types (word splitting of the flags intended).
  # shellcheck disable=SC2046
  "$cxx" -std=c++20 tests/package/consumer/main.cpp $(pkg_config "$variant" --cflags --libs fieldlog) \
    -o "$work/$variant-pc-consumer"
  if [ "$variant" = shared ]; then
    LD_LIBRARY_PATH=$libdir links_shared "$work/$variant-pc-consumer"
  else
    ! has "$(readelf -d "$work/$variant-pc-consumer")" libfieldlog || { echo "links a shared fieldlog"; return 1; }
  fi
  local out
  out=$(LD_LIBRARY_PATH=$libdir "$work/$variant-pc-consumer")
  expect_lines "$out" "$consumer_line"
}

host() { [ -x "$work/host" ] || "$cxx" -std=c++20 -Wall -Wextra tests/package/plugin/host.cpp -o "$work/host" -ldl; }

# plugin VARIANT: builds tests/package/plugin/plugin.cpp as a shared object against the variant,
# hidden visibility as plugins are built; prints its path.
plugin() {
  local variant=$1 out="$work/plugin-$1.so"
  # shellcheck disable=SC2046
  "$cxx" -std=c++20 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -shared -Wl,--no-undefined \
    tests/package/plugin/plugin.cpp $(pkg_config "$variant" --cflags --libs fieldlog) -o "$out"
  echo "$out"
}

static_plugins() {
  host
  local one two
  one=$(plugin static)
  # Nothing of fieldlog leaves the plugin: two of them cannot see each other's copy.
  local exported
  exported=$(nm -D --defined-only "$one" | c++filt | cut -d' ' -f3- |
    grep -E '^(fieldlog::|typeinfo for fieldlog::|typeinfo name for fieldlog::|vtable for fieldlog::)' || true)
  [ -z "$exported" ] || { echo "the plugin exports fieldlog's symbols:"; echo "$exported"; return 1; }
  ! has "$(readelf -d "$work/host")" libfieldlog || { echo "the host links fieldlog"; return 1; }
  two="$work/plugin-static-copy.so"
  cp "$one" "$two"
  local out
  out=$("$work/host" "$one")
  expect_lines "$out" "$(plugin_line plugin-static.so)"
  out=$("$work/host" "$one" "$two")
  expect_lines "$out" "$(plugin_line plugin-static.so)" "$(plugin_line plugin-static-copy.so)"
}

shared_plugin() {
  host
  local libdir so
  libdir=$(libdir_of shared)
  so=$(plugin shared)
  LD_LIBRARY_PATH=$libdir links_shared "$so"
  local out
  out=$(LD_LIBRARY_PATH=$libdir "$work/host" "$so")
  expect_lines "$out" "$(plugin_line plugin-shared.so)"
}

check "static install" build_static
check "static cmake consumer" cmake_consumer static
check "static pkg-config consumer" pkgconfig_consumer static
check "static plugins (two, dlopen)" static_plugins
check "shared install" build_shared
check "shared library (SONAME, exports)" shared_library
check "shared cmake consumer" cmake_consumer shared
check "shared pkg-config consumer" pkgconfig_consumer shared
check "shared plugin (dlopen)" shared_plugin
exit "$failed"
