# SPDX-License-Identifier: MIT
# The optional features and the package each needs. FIELDLOG_WITH_<NAME> is AUTO (built when
# the package is found, with a status line saying so either way), ON (a missing package stops
# configure) or OFF (not looked for). Sets FIELDLOG_WITH_<NAME> to ON or OFF for the rest of the
# build, FIELDLOG_FEATURE_LIBRARIES (linked privately), FIELDLOG_FEATURE_DEFINITIONS and
# FIELDLOG_FEATURE_INCLUDE_DIRS (a header-only use of a package).
set(FIELDLOG_FEATURE_LIBRARIES "")
set(FIELDLOG_FEATURE_DEFINITIONS "")
set(FIELDLOG_FEATURE_INCLUDE_DIRS "")
set(FIELDLOG_FEATURES TLS GZIP TOML TZ OTLP)

# fieldlog_feature(NAME PACKAGE TARGET DEBIAN WHAT): finds PACKAGE as FIELDLOG_WITH_NAME says.
macro(fieldlog_feature name package target debian what)
  set(FIELDLOG_WITH_${name} AUTO CACHE STRING "${what}: AUTO (if ${package} is found), ON or OFF")
  set_property(CACHE FIELDLOG_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  set(_fieldlog_choice ${FIELDLOG_WITH_${name}})
  string(TOUPPER "${_fieldlog_choice}" _fieldlog_choice)
  set(_fieldlog_on OFF)
  if(_fieldlog_choice STREQUAL "AUTO")
    find_package(${package} QUIET)
    if(${package}_FOUND)
      set(_fieldlog_on ON)
    else()
      message(STATUS "fieldlog: no ${package} found: ${what} off (install ${debian} to have it)")
    endif()
  elseif(_fieldlog_choice)
    find_package(${package} QUIET)
    if(NOT ${package}_FOUND)
      message(FATAL_ERROR "fieldlog: FIELDLOG_WITH_${name}=ON needs ${package} (Debian: ${debian})")
    endif()
    set(_fieldlog_on ON)
  endif()
  if(_fieldlog_on)
    list(APPEND FIELDLOG_FEATURE_LIBRARIES ${target})
    list(APPEND FIELDLOG_FEATURE_DEFINITIONS FIELDLOG_WITH_${name}=1)
  else()
    list(APPEND FIELDLOG_FEATURE_DEFINITIONS FIELDLOG_WITH_${name}=0)
  endif()
  # The result for the rest of the build; the cache keeps the choice as given.
  set(FIELDLOG_WITH_${name} ${_fieldlog_on})
  message(STATUS "fieldlog: ${what}: ${_fieldlog_on}")
endmacro()

fieldlog_feature(TLS GnuTLS GnuTLS::GnuTLS libgnutls28-dev "TLS syslog transports (tls, relp-tls)")
fieldlog_feature(GZIP ZLIB ZLIB::ZLIB zlib1g-dev "gzip compression of rotated files")
fieldlog_feature(TOML tomlplusplus tomlplusplus::tomlplusplus libtomlplusplus-dev "TOML configuration files")
# Debian's libtomlplusplus is built against libstdc++: with libc++ toml++ is compiled in, header-only.
if(FIELDLOG_WITH_TOML AND FIELDLOG_WITH_LIBCXX)
  list(REMOVE_ITEM FIELDLOG_FEATURE_LIBRARIES tomlplusplus::tomlplusplus)
  list(APPEND FIELDLOG_FEATURE_DEFINITIONS TOML_HEADER_ONLY=1)
  get_target_property(FIELDLOG_TOML_INCLUDE_DIRS tomlplusplus::tomlplusplus INTERFACE_INCLUDE_DIRECTORIES)
  list(APPEND FIELDLOG_FEATURE_INCLUDE_DIRS ${FIELDLOG_TOML_INCLUDE_DIRS})
endif()
# Debian's libdate-tz is built against libstdc++, and it has no header-only mode.
if(FIELDLOG_WITH_LIBCXX)
  string(TOUPPER "${FIELDLOG_WITH_TZ}" _fieldlog_choice)
  if(_fieldlog_choice AND NOT _fieldlog_choice STREQUAL "AUTO")
    message(FATAL_ERROR "fieldlog: FIELDLOG_WITH_TZ=ON needs date's tz library built against libc++")
  endif()
  message(STATUS "fieldlog: libc++: named time zones off (date's tz library is built for libstdc++)")
  set(FIELDLOG_WITH_TZ OFF)
endif()
fieldlog_feature(TZ date date::date-tz libhowardhinnant-date-dev "named time zones")
fieldlog_feature(OTLP CURL CURL::libcurl libcurl4-gnutls-dev "the OTLP/HTTP sink")
