# emb_add_library(): the target library for a firmware project, compiled from source with
# the project's own (cross) toolchain. Included by embConfig.cmake (an installed package,
# `find_package(emb)`) and by the top-level CMakeLists.txt of a checkout used through
# add_subdirectory() or FetchContent. Either one sets, before including this file:
#
#   EMB_SOURCE_ROOT   a folder with src/, ports/<port>/ and catalog/trace_events.yaml
#   EMB_INCLUDE_DIR   the public headers (include/emb/*.h)
#   EMB_EMBGEN        the host's embgen; EMB_EMBGEN_TARGET a target that builds it, if any
#   EMB_CORE_SOURCES_REL  the core's sources, relative to EMB_SOURCE_ROOT
#
#   emb_add_library(<name> PORT cortex-m [CPU cortex-m4] [CATALOG my_events.yaml]
#                   [FIRMWARE name] [VERSION text] [OPTIONS CONFIG_EMB_X=V ...])
#
# adds the static library <name>: the core and the port's sources, the trace emitters
# embgen writes for the built-in catalogue merged with CATALOG (its classes appended to the
# built-in ones), -mcpu=CPU -mthumb when CPU is given, and the identity the descriptor
# publishes: "FIRMWARE VERSION" (FIRMWARE defaults to the project's name, VERSION to
# `git describe --tags --always --dirty` of the project's source folder, else the
# project's version) and the flags "cpu=CPU KEY=V ..." from OPTIONS. Linking <name> adds the
# port's folder to the linker's search path, so the firmware's linker script can say
# `INCLUDE emb.ld`, and links with --build-id. The merged catalogue, which `emb trace
# --catalog` decodes with, lands at <build>/<name>-gen/catalog.yaml (target property
# EMB_CATALOG).
include_guard(GLOBAL)

# The port's own sources: what each port adds to the core.
function(emb__port_sources port cpu out)
  set(dir ${EMB_SOURCE_ROOT}/ports/${port})
  if(port STREQUAL "cortex-m")
    set(files ${dir}/cortex_m.c ${dir}/fault.c)
    # The ITM exists on every core but ARMv6-M and ARMv8-M Baseline (ports/cortex-m/itm.cmake).
    if(NOT cpu MATCHES "^cortex-m(0|0plus|0\\+|1|23)$")
      list(APPEND files ${dir}/itm.c)
    endif()
  else()
    # The native port's library is installed built (libemb.a, pkg-config emb).
    message(FATAL_ERROR "emb_add_library: no port '${port}' (cortex-m)")
  endif()
  set(${out} ${files} PARENT_SCOPE)
endfunction()

# "name version": the firmware's identity as its descriptor says it.
function(emb__firmware_version name version out)
  if(NOT version)
    find_package(Git QUIET)
    if(GIT_FOUND)
      execute_process(COMMAND ${GIT_EXECUTABLE} describe --tags --always --dirty
                      WORKING_DIRECTORY ${CMAKE_SOURCE_DIR} OUTPUT_VARIABLE version
                      OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        set(version "")
      endif()
    endif()
  endif()
  if(NOT version)
    set(version "${PROJECT_VERSION}")
  endif()
  string(STRIP "${name} ${version}" text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# The merged catalogue and embgen's outputs for it, under <build>/<name>-gen.
function(emb__generate name catalog gen)
  set(builtin ${EMB_SOURCE_ROOT}/catalog/trace_events.yaml)
  set(merge_script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/emb_merge_catalog.cmake)
  set(merged ${gen}/catalog.yaml)
  set(depends ${builtin})
  if(catalog)
    get_filename_component(catalog ${catalog} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND depends ${catalog})
  endif()
  add_custom_command(
    OUTPUT ${merged}
    COMMAND ${CMAKE_COMMAND} -DBUILTIN=${builtin} -DUSER=${catalog} -DOUT=${merged}
            -P ${merge_script}
    DEPENDS ${depends} ${merge_script}
    COMMENT "Merging the trace event catalogue for ${name}"
    VERBATIM)
  set(embgen_depends)
  if(EMB_EMBGEN_TARGET)
    set(embgen_depends ${EMB_EMBGEN_TARGET})
  endif()
  add_custom_command(
    OUTPUT ${gen}/include/emb/trace_events.h ${gen}/trace_events.c ${gen}/metadata.tsdl
    COMMAND ${CMAKE_COMMAND} -E make_directory ${gen}/include/emb
    COMMAND ${EMB_EMBGEN} --catalog ${merged} --header ${gen}/include/emb/trace_events.h
            --source ${gen}/trace_events.c --tsdl ${gen}/metadata.tsdl
    DEPENDS ${merged} ${embgen_depends}
    COMMENT "Generating the trace emitters for ${name}"
    VERBATIM)
  add_custom_target(${name}_trace_events DEPENDS ${gen}/include/emb/trace_events.h
                                                 ${gen}/trace_events.c)
endfunction()

function(emb_add_library name)
  cmake_parse_arguments(A "" "PORT;CPU;CATALOG;FIRMWARE;VERSION" "OPTIONS" ${ARGN})
  if(NOT A_PORT)
    message(FATAL_ERROR "emb_add_library(${name}): PORT is required (cortex-m)")
  endif()
  if(NOT A_FIRMWARE)
    set(A_FIRMWARE ${PROJECT_NAME})
  endif()
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name}-gen)
  emb__generate(${name} "${A_CATALOG}" ${gen})
  emb__port_sources(${A_PORT} "${A_CPU}" port_sources)
  set(core)
  foreach(s ${EMB_CORE_SOURCES_REL})
    list(APPEND core ${EMB_SOURCE_ROOT}/${s})
  endforeach()
  add_library(${name} STATIC ${core} ${port_sources} ${gen}/trace_events.c)
  add_dependencies(${name} ${name}_trace_events)
  set(port_dir ${EMB_SOURCE_ROOT}/ports/${A_PORT})
  target_include_directories(${name} PUBLIC ${EMB_INCLUDE_DIR} ${port_dir}/include ${gen}/include)
  target_compile_definitions(${name} PUBLIC ${A_OPTIONS})
  set(flags)
  if(A_CPU)
    target_compile_options(${name} PUBLIC -mcpu=${A_CPU} -mthumb)
    target_link_options(${name} INTERFACE -mcpu=${A_CPU} -mthumb)
    set(flags "cpu=${A_CPU}")
  endif()
  target_compile_options(${name} PRIVATE -ffreestanding -ffunction-sections -fdata-sections)
  foreach(o ${A_OPTIONS})
    string(REGEX REPLACE "^CONFIG_EMB_" "" o "${o}")
    string(APPEND flags " ${o}")
  endforeach()
  string(STRIP "${flags}" flags)
  emb__firmware_version("${A_FIRMWARE}" "${A_VERSION}" version)
  # Only the descriptor reads them: private, so the firmware's own objects do not rebuild.
  target_compile_definitions(${name} PRIVATE CONFIG_EMB_FIRMWARE_VERSION="${version}"
                                             CONFIG_EMB_FIRMWARE_CONFIG="${flags}")
  if(A_PORT STREQUAL "cortex-m")
    target_link_options(${name} INTERFACE -L${port_dir} -Wl,--build-id)
  endif()
  set_target_properties(${name} PROPERTIES EMB_CATALOG ${gen}/catalog.yaml
                                           EMB_FIRMWARE_VERSION "${version}"
                                           EMB_LINKER_DIR ${port_dir})
  message(STATUS "emb: ${name} for ${A_PORT} ${A_CPU}, firmware \"${version}\", flags \"${flags}\"")
endfunction()
