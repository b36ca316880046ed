# `make install` (cmake --install): the host tools, the public headers, the sources and
# linker fragments of the ports a firmware compiles the library from, the catalogue, the
# CMake package (find_package(emb)), the native port's library with its pkg-config file,
# and the man pages and bash completion. Layout under the prefix:
#
#   bin/emb, bin/embgen
#   include/emb/                  public headers (and internal/, which they include)
#   include/emb-native/           the native port's headers and the built-in emitters
#   lib/libemb.a, lib/pkgconfig/emb.pc        the native port, for host programs
#   lib/cmake/emb/                embConfig.cmake, emb_add_library()
#   share/emb/src, share/emb/ports/cortex-m, share/emb/catalog   what emb_add_library compiles
#   share/emb/template-cortex-m, share/doc/emb/porting.md           a firmware to start from
#   share/man/man1/emb*.1, share/bash-completion/completions/emb
include(CMakePackageConfigHelpers)
set(EMB_INSTALL_SHARE share/emb)
set(EMB_INSTALL_CMAKE lib/cmake/emb)
set(CMAKE_INSTALL_BINDIR bin)
set(CMAKE_INSTALL_INCLUDEDIR include)
set(CMAKE_INSTALL_LIBDIR lib)

install(TARGETS emb_tool embgen RUNTIME DESTINATION bin)
install(DIRECTORY include/emb DESTINATION include)
install(DIRECTORY src/ DESTINATION ${EMB_INSTALL_SHARE}/src FILES_MATCHING PATTERN "*.c" PATTERN "*.h")
install(DIRECTORY ports/cortex-m DESTINATION ${EMB_INSTALL_SHARE}/ports
        FILES_MATCHING PATTERN "*.c" PATTERN "*.h" PATTERN "*.ld" PATTERN "mps2" EXCLUDE)
install(FILES catalog/trace_events.yaml DESTINATION ${EMB_INSTALL_SHARE}/catalog)
install(DIRECTORY examples/template-cortex-m DESTINATION ${EMB_INSTALL_SHARE} PATTERN "build*" EXCLUDE)
install(FILES docs/porting.md DESTINATION share/doc/emb)

# The native port built, for host programs (pkg-config emb).
if(EMB_PORT STREQUAL "native")
  install(TARGETS emb ARCHIVE DESTINATION lib)
  install(DIRECTORY ports/native/include/ DESTINATION include/emb-native)
  install(FILES ${EMB_GEN_DIR}/include/emb/trace_events.h DESTINATION include/emb-native/emb)
  configure_file(cmake/emb.pc.in ${CMAKE_BINARY_DIR}/emb.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/emb.pc DESTINATION lib/pkgconfig)
endif()

# The CMake package: the core's sources relative to the source root, so the installed
# emb_add_library() compiles exactly what this build's library does.
set(EMB_CORE_SOURCES_REL)
foreach(s ${EMB_CORE_SOURCES})
  if(NOT s MATCHES "^${EMB_GEN_DIR}/")
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${s})
    list(APPEND EMB_CORE_SOURCES_REL ${rel})
  endif()
endforeach()
configure_package_config_file(cmake/embConfig.cmake.in ${CMAKE_BINARY_DIR}/embConfig.cmake
  INSTALL_DESTINATION ${EMB_INSTALL_CMAKE}
  PATH_VARS EMB_INSTALL_SHARE CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/embConfigVersion.cmake
  COMPATIBILITY SameMinorVersion ARCH_INDEPENDENT)
install(FILES ${CMAKE_BINARY_DIR}/embConfig.cmake ${CMAKE_BINARY_DIR}/embConfigVersion.cmake
              cmake/emb_add_library.cmake cmake/emb_merge_catalog.cmake
        DESTINATION ${EMB_INSTALL_CMAKE})

# Man pages and completion, written from `emb --help` at build time (tools/man).
find_package(Python3 REQUIRED COMPONENTS Interpreter)
find_program(EMB_HELP2MAN help2man REQUIRED)
set(EMB_MAN_DIR ${CMAKE_BINARY_DIR}/man)
add_custom_command(
  OUTPUT ${EMB_MAN_DIR}/emb.1 ${CMAKE_BINARY_DIR}/completion/emb
  COMMAND ${CMAKE_COMMAND} -E make_directory ${EMB_MAN_DIR} ${CMAKE_BINARY_DIR}/completion
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0 ${Python3_EXECUTABLE}
          ${PROJECT_SOURCE_DIR}/tools/man/emb_docs.py $<TARGET_FILE:emb_tool>
          ${PROJECT_VERSION} ${EMB_MAN_DIR} ${CMAKE_BINARY_DIR}/completion/emb
  DEPENDS emb_tool ${PROJECT_SOURCE_DIR}/tools/man/emb_docs.py
  COMMENT "Writing the man pages and the bash completion from emb --help"
  VERBATIM)
add_custom_target(emb_docs ALL DEPENDS ${EMB_MAN_DIR}/emb.1 ${CMAKE_BINARY_DIR}/completion/emb)
install(DIRECTORY ${CMAKE_BINARY_DIR}/man/ DESTINATION share/man/man1 FILES_MATCHING PATTERN "*.1")
install(FILES ${CMAKE_BINARY_DIR}/completion/emb DESTINATION share/bash-completion/completions)

# `make uninstall`: removes what install_manifest.txt (written by the last install) lists.
add_custom_target(uninstall
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${CMAKE_BINARY_DIR}/install_manifest.txt
          -P ${PROJECT_SOURCE_DIR}/cmake/emb_uninstall.cmake
  COMMENT "Removing the files of the last install")

include(${PROJECT_SOURCE_DIR}/cmake/emb_package.cmake)
