# SPDX-License-Identifier: MIT
# Debian packages from a shared build (FIELDLOG_DEB_PACKAGES=ON, then `cpack` in the build
# directory): libfieldlog0, the shared library; libfieldlog-dev, the headers, the CMake package
# and fieldlog.pc. docs/install.md says how to make and install them; tests/package/run.sh makes
# them, checks them with lintian, installs them and builds consumers against them.
if(NOT BUILD_SHARED_LIBS)
  message(FATAL_ERROR "fieldlog: FIELDLOG_DEB_PACKAGES needs a shared build (-DBUILD_SHARED_LIBS=ON)")
endif()

set(FIELDLOG_DEB_RUNTIME libfieldlog${PROJECT_VERSION_MAJOR})
set(FIELDLOG_DEB_DEV libfieldlog-dev)

# Each package's documents: the license as a Debian copyright file (machine-readable, made from
# LICENSE), and the changelog, compressed as Debian's tools compress it.
file(STRINGS LICENSE FIELDLOG_LICENSE_LINES)
set(FIELDLOG_COPYRIGHT "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n")
string(APPEND FIELDLOG_COPYRIGHT "Upstream-Name: fieldlog\n\nFiles: *\n")
foreach(line IN LISTS FIELDLOG_LICENSE_LINES)
  if(line MATCHES "^Copyright \\(c\\) (.*)$")
    string(APPEND FIELDLOG_COPYRIGHT "Copyright: ${CMAKE_MATCH_1}\nLicense: Expat\n")
    set(FIELDLOG_LICENSE_TEXT "")
  elseif(DEFINED FIELDLOG_LICENSE_TEXT)
    if(line STREQUAL "")
      string(APPEND FIELDLOG_LICENSE_TEXT " .\n")
    else()
      string(APPEND FIELDLOG_LICENSE_TEXT " ${line}\n")
    endif()
  endif()
endforeach()
string(REGEX REPLACE "^ \\.\n" "" FIELDLOG_LICENSE_TEXT "${FIELDLOG_LICENSE_TEXT}")
file(WRITE ${PROJECT_BINARY_DIR}/debian/copyright "${FIELDLOG_COPYRIGHT}${FIELDLOG_LICENSE_TEXT}")
find_program(FIELDLOG_GZIP gzip REQUIRED)
execute_process(COMMAND ${FIELDLOG_GZIP} -9nc ${PROJECT_SOURCE_DIR}/cmake/debian/changelog
                OUTPUT_FILE ${PROJECT_BINARY_DIR}/debian/changelog.gz COMMAND_ERROR_IS_FATAL ANY)
foreach(pair runtime:${FIELDLOG_DEB_RUNTIME} development:${FIELDLOG_DEB_DEV})
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 component)
  list(GET pair 1 package)
  install(FILES ${PROJECT_BINARY_DIR}/debian/copyright ${PROJECT_BINARY_DIR}/debian/changelog.gz
          DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${package} COMPONENT ${component})
endforeach()
install(FILES examples/fieldlog.toml DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/doc/${FIELDLOG_DEB_DEV}/examples
        COMPONENT development)
install(FILES cmake/debian/libfieldlog0.lintian-overrides DESTINATION ${CMAKE_INSTALL_DATAROOTDIR}/lintian/overrides
        RENAME ${FIELDLOG_DEB_RUNTIME} COMPONENT runtime)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME fieldlog)
set(CPACK_PACKAGE_VENDOR "the fieldlog authors")
set(CPACK_PACKAGE_CONTACT "fieldlog maintainers <maintainers@users.noreply.a-seed-0bb438a8.example>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime development)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# The architecture the library is built for, as Debian names it: a cross build's too (CPack
# would name the build machine's).
find_program(FIELDLOG_DPKG_ARCHITECTURE dpkg-architecture REQUIRED)
execute_process(COMMAND ${FIELDLOG_DPKG_ARCHITECTURE} -t${CMAKE_LIBRARY_ARCHITECTURE} -qDEB_HOST_ARCH
                OUTPUT_VARIABLE CPACK_DEBIAN_PACKAGE_ARCHITECTURE OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET COMMAND_ERROR_IS_FATAL ANY)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # the runtime's Depends, from the libraries it links
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)  # what a program built against it depends on
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${FIELDLOG_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/cmake/debian/triggers)
# CPack indents the long description and writes its empty lines as " .".
set(FIELDLOG_DEB_ABOUT "fieldlog writes one line per record (JSON, logfmt, a console format or the
OpenTelemetry data model) with typed fields, to files, stdout, UDP, syslog,
journald and OTLP collectors, without touching the heap on the hot path.
")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "structured logging library for C++ services
${FIELDLOG_DEB_ABOUT}
This package holds the shared library.")

set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_NAME ${FIELDLOG_DEB_DEV})
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEVELOPMENT_PACKAGE_DEPENDS "${FIELDLOG_DEB_RUNTIME} (= ${PROJECT_VERSION}), libfmt-dev")
set(CPACK_COMPONENT_DEVELOPMENT_DESCRIPTION "structured logging library for C++ services - development files
${FIELDLOG_DEB_ABOUT}
This package holds the headers, the CMake package (find_package(fieldlog))
and the pkg-config file.")

include(CPack)
