# A checkout used by another project (add_subdirectory, FetchContent): emb_add_library()
# compiles the library from this tree with that project's toolchain, and embgen is built
# for the host in a build of its own (ExternalProject: configured and built at build time,
# with the host's compiler, no toolchain file), so no second configure is done by hand.
set(EMB_TARGET_ONLY ON)
set(EMB_GEN_DIR ${CMAKE_CURRENT_BINARY_DIR}/gen)
add_subdirectory(${PROJECT_SOURCE_DIR}/src ${CMAKE_CURRENT_BINARY_DIR}/src) # EMB_CORE_SOURCES

set(EMB_SOURCE_ROOT ${PROJECT_SOURCE_DIR})
set(EMB_INCLUDE_DIR ${PROJECT_SOURCE_DIR}/include)
set(EMB_CORE_SOURCES_REL)
foreach(s ${EMB_CORE_SOURCES})
  if(s MATCHES "^${PROJECT_SOURCE_DIR}/")
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${s})
    list(APPEND EMB_CORE_SOURCES_REL ${rel})
  endif()
endforeach()

include(ExternalProject)
set(host ${CMAKE_CURRENT_BINARY_DIR}/host-embgen)
ExternalProject_Add(emb_host_embgen
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${host}
  CMAKE_ARGS -DCMAKE_BUILD_TYPE=Release
  BUILD_COMMAND ${CMAKE_COMMAND} --build ${host} --target embgen
  INSTALL_COMMAND ""
  BUILD_BYPRODUCTS ${host}/bin/embgen
  BUILD_ALWAYS OFF)
set(EMB_EMBGEN ${host}/bin/embgen)
set(EMB_EMBGEN_TARGET emb_host_embgen)

include(${PROJECT_SOURCE_DIR}/cmake/emb_add_library.cmake)
# The caller's scope sees the function; these variables it reads when it runs.
foreach(v EMB_SOURCE_ROOT EMB_INCLUDE_DIR EMB_CORE_SOURCES_REL EMB_EMBGEN EMB_EMBGEN_TARGET)
  set(${v} "${${v}}" PARENT_SCOPE)
endforeach()
