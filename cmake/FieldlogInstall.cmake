# `cmake --install` produces a CMake package: find_package(fieldlog CONFIG REQUIRED) then link
# fieldlog::fieldlog. It describes the variant built (static or shared). tests/package/ builds
# a consumer against the installed tree.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS fieldlog EXPORT fieldlogTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/fieldlog DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT fieldlogTargets NAMESPACE fieldlog:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fieldlog)

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
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/fieldlog)
