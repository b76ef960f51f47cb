# SPDX-License-Identifier: MIT
# Cross-builds fieldlog for arm64 Linux with Debian's toolchain (g++-aarch64-linux-gnu) against
# the arm64 packages of its dependencies (multiarch: libfmt-dev:arm64 ...), and runs what it
# builds (tests, CTest's discovery of test cases) under qemu-user. docs/platforms.md has the commands.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# Multiarch puts the arm64 libraries, their CMake packages and their .pc files under
# /usr/lib/aarch64-linux-gnu, beside the build machine's own, and arm64's dynamic loader in /lib:
# no sysroot, and qemu needs no -L.
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
