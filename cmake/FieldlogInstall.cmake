# SPDX-License-Identifier: MIT
# `cmake --install` produces a CMake package: find_package(fieldlog CONFIG REQUIRED) then link
# fieldlog::fieldlog; and a pkg-config file, fieldlog.pc. Either describes the variant built
# (static or shared) and names only the dependencies of the features built in (FIELDLOG_WITH_*).
# tests/package/ builds consumers of both kinds against the installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Two components, as Debian splits a library (cmake/FieldlogDebPackages.cmake): `runtime`, the
# shared library itself; `development`, everything a program is built with.
install(TARGETS fieldlog EXPORT fieldlogTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/fieldlog DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
install(EXPORT fieldlogTargets NAMESPACE fieldlog:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fieldlog
  COMPONENT development)

get_target_property(FIELDLOG_LIBRARY_TYPE fieldlog TYPE)
if(FIELDLOG_LIBRARY_TYPE STREQUAL "SHARED_LIBRARY")
  set(FIELDLOG_SHARED_LIBRARY ON)
else()
  set(FIELDLOG_SHARED_LIBRARY OFF)
endif()

configure_package_config_file(cmake/fieldlogConfig.cmake.in
  ${PROJECT_BINARY_DIR}/fieldlogConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fieldlog)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/fieldlogConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/fieldlogConfig.cmake ${PROJECT_BINARY_DIR}/fieldlogConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fieldlog COMPONENT development)

# fieldlog.pc: its paths relative to ${pcfiledir} (what `cmake --install --prefix` decides is
# not known here), unless the install dirs are absolute.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(FIELDLOG_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(FIELDLOG_PC_LIBDIR "${CMAKE_INSTALL_FULL_LIBDIR}")
  set(FIELDLOG_PC_INCLUDEDIR "${CMAKE_INSTALL_FULL_INCLUDEDIR}")
else()
  file(RELATIVE_PATH FIELDLOG_PC_UP "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" FIELDLOG_PC_UP "${FIELDLOG_PC_UP}")
  set(FIELDLOG_PC_PREFIX "\${pcfiledir}/${FIELDLOG_PC_UP}")
  set(FIELDLOG_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(FIELDLOG_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# What this variant links besides fmt: the libraries of the features built in, and threads.
# They are written out as link flags, not named in Requires or Requires.private: pkg-config
# hands a required package's Cflags to every consumer (toml++'s TOML_* defines, a multiarch
# include directory), and fieldlog's headers need none of them. pkg-config gives each one's
# flags, plain and --static; without it, the library's name.
find_package(PkgConfig QUIET)
set(FIELDLOG_PC_DEPENDS_LIBS "")
set(FIELDLOG_PC_DEPENDS_STATIC_LIBS "")
foreach(feature_package TOML:tomlplusplus:tomlplusplus GZIP:zlib:z TLS:gnutls:gnutls OTLP:libcurl:curl)  # feature:.pc:lib
  string(REPLACE ":" ";" feature_package "${feature_package}")
  list(GET feature_package 0 feature)
  list(GET feature_package 1 package)
  list(GET feature_package 2 library)
  if(NOT FIELDLOG_WITH_${feature})
    continue()
  endif()
  set(libs "-l${library}")
  set(static_libs "-l${library}")
  if(PKG_CONFIG_FOUND)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --libs ${package} RESULT_VARIABLE failed
                    OUTPUT_VARIABLE found_libs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --static --libs ${package} RESULT_VARIABLE static_failed
                    OUTPUT_VARIABLE found_static_libs OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(NOT failed AND NOT static_failed)
      set(libs "${found_libs}")
      set(static_libs "${found_static_libs}")
    endif()
  endif()
  string(APPEND FIELDLOG_PC_DEPENDS_LIBS " ${libs}")
  string(APPEND FIELDLOG_PC_DEPENDS_STATIC_LIBS " ${static_libs}")
endforeach()
# date's libdate-tz ships no .pc file.
set(FIELDLOG_PC_OTHER_LIBS "")
if(FIELDLOG_WITH_TZ)
  string(APPEND FIELDLOG_PC_OTHER_LIBS " -ldate-tz")
endif()
string(APPEND FIELDLOG_PC_OTHER_LIBS " -pthread")
string(APPEND FIELDLOG_PC_DEPENDS_LIBS "${FIELDLOG_PC_OTHER_LIBS}")
if(FIELDLOG_SHARED_LIBRARY)
  set(FIELDLOG_PC_LIBS "")
  string(STRIP "${FIELDLOG_PC_DEPENDS_STATIC_LIBS}${FIELDLOG_PC_OTHER_LIBS}" FIELDLOG_PC_LIBS_PRIVATE)
  set(FIELDLOG_PC_CFLAGS " -DFIELDLOG_SHARED")
else()
  set(FIELDLOG_PC_LIBS "${FIELDLOG_PC_DEPENDS_LIBS}")
  string(STRIP "${FIELDLOG_PC_DEPENDS_STATIC_LIBS}" FIELDLOG_PC_LIBS_PRIVATE)
  set(FIELDLOG_PC_CFLAGS "")
endif()
configure_file(cmake/fieldlog.pc.in ${PROJECT_BINARY_DIR}/fieldlog.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/fieldlog.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)

if(FIELDLOG_DEB_PACKAGES)
  include(cmake/FieldlogDebPackages.cmake)
else()
  # The license and the annotated configuration example, where Debian puts a package's documents.
  install(FILES LICENSE examples/fieldlog.toml DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT development)
endif()
