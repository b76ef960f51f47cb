# SPDX-License-Identifier: MIT
# A built-in sink is a module: the folder sinks/<name>/ and one fieldlog_sink_module() line in
# CMakeLists.txt, which adds the folder's sources to the library.
#
# fieldlog_sink_module(<name> [FEATURE_SOURCES <FEATURE>:<with>:<without>...])
#   <name>            the folder under sinks/; every .cpp in it is compiled
#   FEATURE_SOURCES   a source that needs FIELDLOG_WITH_<FEATURE> and the one that refuses the
#                     feature's configurations when it is left out: the build keeps one of the two
function(fieldlog_sink_module name)
  cmake_parse_arguments(PARSE_ARGV 1 module "" "" "FEATURE_SOURCES")
  if(module_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fieldlog_sink_module(${name}): unknown arguments ${module_UNPARSED_ARGUMENTS} "
                        "(write FEATURE_SOURCES <FEATURE>:<with>:<without>)")
  endif()
  set(folder ${PROJECT_SOURCE_DIR}/sinks/${name})
  if(NOT IS_DIRECTORY ${folder})
    message(FATAL_ERROR "fieldlog_sink_module(${name}): no folder sinks/${name}/")
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${folder}/*.cpp)
  foreach(choice IN LISTS module_FEATURE_SOURCES)
    string(REPLACE ":" ";" parts "${choice}")
    list(LENGTH parts count)
    if(NOT count EQUAL 3)
      message(FATAL_ERROR "fieldlog_sink_module(${name}): FEATURE_SOURCES ${choice}: "
                          "expected <FEATURE>:<with>:<without>, e.g. TLS:tls_stream.cpp:tls_refused.cpp")
    endif()
    list(GET parts 0 feature)
    list(GET parts 1 with)
    list(GET parts 2 without)
    if(NOT DEFINED FIELDLOG_WITH_${feature})
      message(FATAL_ERROR "fieldlog_sink_module(${name}): ${feature} is no feature (${FIELDLOG_FEATURES})")
    endif()
    foreach(source ${with} ${without})
      if(NOT EXISTS ${folder}/${source})
        message(FATAL_ERROR "fieldlog_sink_module(${name}): no sinks/${name}/${source}")
      endif()
    endforeach()
    if(FIELDLOG_WITH_${feature})
      list(REMOVE_ITEM sources ${folder}/${without})
    else()
      list(REMOVE_ITEM sources ${folder}/${with})
    endif()
  endforeach()
  target_sources(fieldlog PRIVATE ${sources})
endfunction()
