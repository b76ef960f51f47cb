# SPDX-License-Identifier: MIT
# A built-in sink is a module: the folder sinks/<name>/ and one fieldlog_sink_module() line in
# CMakeLists.txt, which adds the folder's sources to the library and lists its sink types.
# fieldlog_builtin_sink_types(), after the last such line, writes the list the registry of sink
# types starts with (src/control/sink_types.cpp): a generated source, since a static library
# leaves out an object file nothing refers to, and with it any self-registration in it.
#
# fieldlog_sink_module(<name> [TYPES <function>...] [FEATURE_SOURCES <FEATURE>:<with>:<without>...])
#   <name>            the folder under sinks/; every .cpp in it is compiled
#   TYPES             the folder's functions `fieldlog::SinkType fieldlog::detail::<function>()`,
#                     each the record a program hands to register_sink_type(); the registry lists
#                     the types in the order of the lines, then of TYPES
#   FEATURE_SOURCES   a source that needs FIELDLOG_WITH_<FEATURE> and the one that refuses the
#                     feature's configurations when it is left out: the build keeps one of the two
function(fieldlog_sink_module name)
  cmake_parse_arguments(PARSE_ARGV 1 module "" "" "TYPES;FEATURE_SOURCES")
  if(module_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "fieldlog_sink_module(${name}): unknown arguments ${module_UNPARSED_ARGUMENTS} "
                        "(write TYPES <function>... or FEATURE_SOURCES <FEATURE>:<with>:<without>...)")
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
  foreach(function IN LISTS module_TYPES)
    if(NOT function MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
      message(FATAL_ERROR "fieldlog_sink_module(${name}): TYPES ${function}: not a function's name")
    endif()
  endforeach()
  target_sources(fieldlog PRIVATE ${sources})
  set_property(GLOBAL APPEND PROPERTY FIELDLOG_SINK_TYPE_FUNCTIONS ${module_TYPES})
endfunction()

# Writes <build>/generated/builtin_sink_types.cpp from cmake/builtin_sink_types.cpp.in: every
# module's TYPES, in order, and adds it to the library.
function(fieldlog_builtin_sink_types)
  get_property(functions GLOBAL PROPERTY FIELDLOG_SINK_TYPE_FUNCTIONS)
  set(FIELDLOG_SINK_TYPE_DECLARATIONS "")
  set(calls "")
  foreach(function IN LISTS functions)
    string(APPEND FIELDLOG_SINK_TYPE_DECLARATIONS "SinkType ${function}();\n")
    list(APPEND calls "${function}()")
  endforeach()
  list(JOIN calls ", " FIELDLOG_SINK_TYPE_CALLS)
  set(generated ${PROJECT_BINARY_DIR}/generated/builtin_sink_types.cpp)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/builtin_sink_types.cpp.in ${generated} @ONLY)
  target_sources(fieldlog PRIVATE ${generated})
endfunction()
