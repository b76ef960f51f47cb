#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The installed package, its variants, and fieldlog inside another build. Installs the static
# build in $1 (default `build`; made if missing), a shared build and the minimal variant (every
# FIELDLOG_WITH_* off; library only, in build-pkg-shared and build-pkg-minimal, reused between
# runs) into temporary prefixes; then for each builds and runs the CMake consumer (find_package),
# plain `c++ … $(pkg-config [--static] --cflags --libs fieldlog)` consumers and a dlopen()ed
# plugin, and checks their lines (and a consumer's exit status: its test observer kept the
# record). Also: Debian packages made from the shared build, checked by lintian, installed and
# used; the minimal variant's program links no optional dependency and its refusals name the
# option; the public headers at strict warnings; add_subdirectory and FetchContent consumers; a
# static fieldlog beside libfmt.so and other fmt users. g++ and clang where the compiler
# matters. One line per check; exits non-zero if any failed.
# With FIELDLOG_PKG_ARCH set to another Debian architecture (arm64), cross-builds with
# cmake/toolchains/<its GNU triplet>.cmake and checks that architecture's Debian packages alone;
# their consumers run under qemu-user (.ci/deps arm64 registers it).
# The checks are functions that check() runs: shellcheck cannot see them called.
# shellcheck disable=SC2317
set -euo pipefail
cd "$(dirname "$0")/../.."
static_build=${1:-build}
shared_build=${FIELDLOG_PKG_SHARED_BUILD:-build-pkg-shared}
minimal_build=${FIELDLOG_PKG_MINIMAL_BUILD:-build-pkg-minimal}
cxx=${CXX:-c++}
jobs=$(nproc)
arch=${FIELDLOG_PKG_ARCH:-$(dpkg --print-architecture)}
multiarch=$(dpkg-architecture -a"$arch" -qDEB_HOST_MULTIARCH 2>/dev/null)  # aarch64-linux-gnu
toolchain=()
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
  toolchain=(--toolchain "$PWD/cmake/toolchains/$multiarch.cmake")
  shared_build=${FIELDLOG_PKG_SHARED_BUILD:-build-pkg-shared-$arch}
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

consumer_line='"logger":"consumer","msg":"hello from an installed fieldlog","package":"installed","answer":42}'
plugin_line() { echo "\"logger\":\"plugin\",\"msg\":\"hello from a plugin\",\"plugin\":\"$1\",\"answer\":42}"; }

failed=0
# check NAME COMMAND...: runs the command in a subshell with `set -e` in force (a function
# called as an `if` condition would run with -e off), prints "package: NAME ok" or FAILED, and
# the seconds it took (CI's time is bounded), followed on failure by what it printed.
check() {
  local name=$1 start=$SECONDS
  shift
  ("$@") >"$work/check.log" 2>&1 &
  if wait $!; then
    echo "package: $name ok ($((SECONDS - start)) s)"
  else
    echo "package: $name FAILED ($((SECONDS - start)) s)"
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

# The shared build is also the Debian packages' (debian_packages): Debian's build flags for
# the architecture, /usr and its multiarch library directory (as debhelper passes them: CMake
# chooses that directory itself only when not cross-building).
build_shared() {
  flags() { dpkg-architecture -a"$arch" -c dpkg-buildflags --get "$1" 2>/dev/null; }
  cmake -S . -B "$shared_build" "${toolchain[@]}" -DBUILD_SHARED_LIBS=ON -DFIELDLOG_BUILD_TESTS=OFF \
    -DFIELDLOG_BUILD_BENCH=OFF -DFIELDLOG_BUILD_EXAMPLES=OFF -DFIELDLOG_DEB_PACKAGES=ON -DCMAKE_INSTALL_PREFIX=/usr \
    "-DCMAKE_INSTALL_LIBDIR=lib/$multiarch" \
    "-DCMAKE_CXX_FLAGS=$(flags CPPFLAGS) $(flags CXXFLAGS)" "-DCMAKE_SHARED_LINKER_FLAGS=$(flags LDFLAGS)" >/dev/null
  cmake --build "$shared_build" --target fieldlog -j"$jobs" >/dev/null
  cmake --install "$shared_build" --prefix "$work/shared" >/dev/null
}

build_minimal() {
  cmake -S . -B "$minimal_build" -DFIELDLOG_WITH_TLS=OFF -DFIELDLOG_WITH_GZIP=OFF -DFIELDLOG_WITH_TOML=OFF \
    -DFIELDLOG_WITH_TZ=OFF -DFIELDLOG_WITH_OTLP=OFF -DFIELDLOG_BUILD_TESTS=OFF -DFIELDLOG_BUILD_BENCH=OFF -DFIELDLOG_BUILD_EXAMPLES=OFF >/dev/null
  cmake --build "$minimal_build" --target fieldlog -j"$jobs" >/dev/null
  cmake --install "$minimal_build" --prefix "$work/minimal" >/dev/null
}

# The license and the example configuration, where Debian puts a package's documents.
docs_installed() {
  local doc
  doc=$(find "$work/static" -type d -path '*/share/doc/fieldlog')
  [ -f "$doc/LICENSE" ] || { find "$work/static/share"; return 1; }
  [ -f "$doc/fieldlog.toml" ] || { find "$work/static/share"; return 1; }
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

# pkgconfig_static_consumer VARIANT: `pkg-config --static` names everything the link needs.
pkgconfig_static_consumer() {
  local variant=$1 libdir flags
  libdir=$(libdir_of "$variant")
  flags=$(pkg_config "$variant" --static --cflags --libs fieldlog)
  # shellcheck disable=SC2086
  "$cxx" -std=c++20 tests/package/consumer/main.cpp $flags -o "$work/$variant-pc-static-consumer"
  local out
  out=$(LD_LIBRARY_PATH=$libdir "$work/$variant-pc-static-consumer")
  expect_lines "$out" "$consumer_line"
}

# cflags_carry_only_what_consumers_need VARIANT: `pkg-config [--static] --cflags fieldlog` is
# fieldlog's include directory, -DFIELDLOG_SHARED for the shared library, and fmt's flags (fmt is
# in fieldlog's headers): nothing of the packages the library links privately, such as toml++'s
# TOML_* defines or a multiarch include directory.
cflags_carry_only_what_consumers_need() {
  local variant=$1 include fmt_flags mode flags flag
  include=$(realpath "$work/$variant/include")
  fmt_flags=" $(pkg-config --cflags fmt) "
  for mode in --shared --static; do
    flags=$(pkg_config "$variant" "$mode" --cflags fieldlog)
    has "$flags" "^-I" || { echo "$mode: no -I in: $flags"; return 1; }
    for flag in $flags; do
      case "$flag" in
        -I*) [ "$(realpath "${flag#-I}")" = "$include" ] && continue ;;
        -DFIELDLOG_SHARED) [ "$variant" = shared ] && continue ;;
      esac
      case "$fmt_flags" in *" $flag "*) continue ;; esac
      echo "$mode: $flag is not for consumers (all: $flags)"
      return 1
    done
  done
}

# The minimal variant's program that logs to stdout links fmt, and none of GnuTLS, zlib, toml++,
# date-tz or libcurl: not as a library it needs, nor as code of theirs pulled into it.
minimal_links_fmt_alone() {
  local program="$work/minimal-pc-consumer" dynamic resolved symbols
  pkgconfig_consumer minimal
  dynamic=$(readelf -d "$program")
  resolved=$(ldd "$program")
  symbols=$(nm -C "$program")
  has "$dynamic" 'NEEDED.*\[libfmt\.so' || { echo "$dynamic"; return 1; }
  ! has "$dynamic" 'NEEDED.*\[lib\(gnutls\|z\|tomlplusplus\|date-tz\|curl[-a-z]*\)\.so' || { echo "$dynamic"; return 1; }
  ! has "$resolved" 'libgnutls\|libz\.so\|libtomlplusplus\|libdate-tz\|libcurl' || { echo "$resolved"; return 1; }
  ! has "$symbols" 'gnutls_\|deflate\|toml::\|date::\|curl_' || { grep 'gnutls_\|deflate\|toml::\|date::\|curl_' <<<"$symbols" | head; return 1; }
  has "$(pkg_config minimal --static --libs fieldlog)" -lfmt
  ! has "$(pkg_config minimal --static --libs fieldlog)" 'gnutls\|-lz\|toml\|date\|curl'
}

# What the minimal variant lacks is refused with the option to rebuild with; UTC and the local
# zone still work.
minimal_refusals() {
  # shellcheck disable=SC2046
  "$cxx" -std=c++20 tests/package/consumer/refusals.cpp $(pkg_config minimal --cflags --libs fieldlog) \
    -o "$work/refusals"
  local out
  out=$("$work/refusals" 2>&1)
  expect_lines "$out" \
    "app.toml: this build of fieldlog reads no TOML files: rebuild with -DFIELDLOG_WITH_TOML=ON (needs toml++: libtomlplusplus-dev)" \
    "rebuild with -DFIELDLOG_WITH_TZ=ON (needs date-tz: libhowardhinnant-date-dev)" \
    "local: Asia/Kolkata 2026-01-01T05:30:00.000000000+05:30" \
    "this build of fieldlog has no TLS: rebuild with -DFIELDLOG_WITH_TLS=ON (needs GnuTLS: libgnutls28-dev)" \
    "compress = gzip: this build of fieldlog has no gzip: rebuild with -DFIELDLOG_WITH_GZIP=ON (needs zlib: zlib1g-dev)" \
    "this build of fieldlog has no OTLP: rebuild with -DFIELDLOG_WITH_OTLP=ON (needs libcurl: libcurl4-gnutls-dev)" \
    "utc: accepted"
}

# strict_headers COMPILER [FLAG...]: every public header, alone and all together, and the consumer
# compile warning-free at the strictest common set of warnings.
strict_headers() {
  local compiler=$1 header include="$work/static/include"
  shift
  local flags=(-std=c++20 -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Werror -fsyntax-only "$@")
  : >"$work/all_headers.cpp"
  for header in $(cd "$include" && find fieldlog -name '*.hpp' | sort); do
    echo "#include <$header>" >>"$work/all_headers.cpp"
    echo "#include <$header>" | "$compiler" "${flags[@]}" -I"$include" -x c++ -
  done
  "$compiler" "${flags[@]}" -I"$include" "$work/all_headers.cpp"
  "$compiler" "${flags[@]}" -I"$include" tests/package/consumer/main.cpp
}

# subproject VIA COMPILER: fieldlog built inside another project (tests/package/subproject, whose
# configure checks the build type, -Werror and the tests); it installs nothing there.
subproject() {
  local via=$1 compiler=$2 dir="$work/sub-$1-$2"
  CXX=$compiler cmake -S tests/package/subproject -B "$dir" -DFIELDLOG_SOURCE="$PWD" -DFIELDLOG_VIA="$via" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  cmake --install "$dir" --prefix "$dir/prefix" >/dev/null
  [ ! -e "$dir/prefix" ] || { echo "installed into the consumer's prefix:"; find "$dir/prefix"; return 1; }
  local out
  out=$("$dir/consumer")
  expect_lines "$out" "$consumer_line"
}

# A static fieldlog beside libfmt.so, libspdlog.so and a second library with a copy of fmt's
# formatting core that differs (tests/package/fmt_beside): every one formats as without fieldlog,
# and the program exports the fmt code it exported before (libfmt.so binds to the program's).
fmt_beside() {
  local dir=tests/package/fmt_beside
  "$cxx" -std=c++20 -fPIC -shared "$dir/second.cpp" -o "$work/libsecond.so" -lfmt
  # shellcheck disable=SC2046
  "$cxx" -std=c++20 "$dir/main.cpp" -o "$work/fmt-without" -L"$work" -lsecond $(pkg-config --cflags --libs spdlog fmt)
  # shellcheck disable=SC2046
  "$cxx" -std=c++20 -DFIELDLOG "$dir/main.cpp" -o "$work/fmt-with" -L"$work" -lsecond \
    $(pkg_config static --cflags --libs fieldlog spdlog)
  local without with
  without=$(LD_LIBRARY_PATH=$work "$work/fmt-without")
  with=$(LD_LIBRARY_PATH=$work "$work/fmt-with" | grep -v '"logger":"beside"')
  expect_lines "$without" 'program: "own"' 'libfmt: "shared"' 'second: second' 'spdlog: "spdlog"'
  [ "$with" = "$without" ] || { echo "with fieldlog:"; echo "$with"; return 1; }
  local lost
  lost=$(comm -23 <(nm -D --defined-only "$work/fmt-without" | awk '/fmt/ {print $3}' | sort) \
    <(nm -D --defined-only "$work/fmt-with" | awk '/fmt/ {print $3}' | sort) | c++filt)
  [ -z "$lost" ] || { echo "no longer exported with fieldlog:"; echo "$lost"; return 1; }
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

# debian_packages: libfieldlog0 and libfieldlog-dev for the architecture, made by cpack from
# the shared build (cmake/FieldlogDebPackages.cmake), with nothing for lintian to warn of;
# installed with dpkg, a find_package consumer and a pkg-config consumer build against them (the
# latter with the compiler the former's CMake found, and the architecture's .pc files) and run;
# then purged.
debian_packages() {
  local sudo="" debs out loader resolved compiler
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  rm -f "$shared_build"/*.deb
  (cd "$shared_build" && cpack -G DEB >/dev/null)
  debs=("$shared_build"/libfieldlog0_*_"$arch".deb "$shared_build"/libfieldlog-dev_*_"$arch".deb)
  lintian --fail-on error,warning "${debs[@]}"
  # shellcheck disable=SC2064  # $sudo now: the trap runs after this function returned
  trap "$sudo dpkg -P libfieldlog-dev libfieldlog0 >/dev/null 2>&1 || true" EXIT
  $sudo dpkg -i "${debs[@]}" >/dev/null
  cmake -S tests/package/consumer -B "$work/deb-consumer" "${toolchain[@]}" >/dev/null
  cmake --build "$work/deb-consumer" >/dev/null
  # What ldd prints, from the program's own dynamic loader (ldd runs the build machine's).
  loader=$(readelf -l "$work/deb-consumer/consumer" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
  resolved=$("$loader" --list "$work/deb-consumer/consumer")
  has "$resolved" 'libfieldlog\.so\.0 => /\(usr/\)\?lib/' || { echo "$resolved"; return 1; }
  out=$("$work/deb-consumer/consumer")
  expect_lines "$out" "$consumer_line"
  compiler=$(sed -n 's/^set(CMAKE_CXX_COMPILER "\(.*\)")$/\1/p' "$work/deb-consumer"/CMakeFiles/*/CMakeCXXCompiler.cmake)
  # shellcheck disable=SC2046
  "$compiler" -std=c++20 tests/package/consumer/main.cpp \
    $(PKG_CONFIG_LIBDIR="/usr/lib/$multiarch/pkgconfig:/usr/share/pkgconfig" pkg-config --cflags --libs fieldlog) \
    -o "$work/deb-pc-consumer"
  out=$("$work/deb-pc-consumer")
  expect_lines "$out" "$consumer_line"
}

if ((${#toolchain[@]})); then
  check "shared install ($arch)" build_shared
  check "Debian packages ($arch): lintian, installed, cmake and pkg-config consumers" debian_packages
  exit "$failed"
fi
check "static install" build_static
check "static install has LICENSE and fieldlog.toml in share/doc/fieldlog" docs_installed
check "static cmake consumer" cmake_consumer static
check "static pkg-config consumer" pkgconfig_consumer static
check "static plugins (two, dlopen)" static_plugins
check "shared install" build_shared
check "shared library (SONAME, exports)" shared_library
check "shared cmake consumer" cmake_consumer shared
check "shared pkg-config consumer" pkgconfig_consumer shared
check "shared plugin (dlopen)" shared_plugin
check "Debian packages: lintian, installed, cmake and pkg-config consumers" debian_packages
check "minimal install (every FIELDLOG_WITH_* off)" build_minimal
check "minimal cmake consumer" cmake_consumer minimal
check "minimal pkg-config consumer links fmt alone (readelf, ldd, nm)" minimal_links_fmt_alone
check "minimal refusals name the option" minimal_refusals
for variant in static shared minimal; do
  check "$variant pkg-config --static consumer" pkgconfig_static_consumer "$variant"
  check "$variant pkg-config Cflags carry only fieldlog's and fmt's" cflags_carry_only_what_consumers_need "$variant"
done
check "static fieldlog beside libfmt.so, libspdlog.so and another fmt copy" fmt_beside
for compiler in g++ clang++; do
  check "public headers at strict warnings ($compiler)" strict_headers "$compiler"
done
check "public headers at strict warnings (clang++ with libc++)" strict_headers clang++ -stdlib=libc++
# Each way in once, each compiler once: every one builds fieldlog whole.
check "add_subdirectory consumer (g++)" subproject add_subdirectory g++
check "FetchContent consumer (clang++)" subproject FetchContent clang++
exit "$failed"
