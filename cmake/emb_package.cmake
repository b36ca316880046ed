# `make package` (cpack -G DEB): a Debian package of the installed tree under /usr, the
# host tools' run-time libraries as its dependencies (dpkg-shlibdeps), the cross compiler
# and QEMU as suggestions (a firmware build needs the first).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME emb-observability)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "EMB Observability <emb@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Flight recorder for firmware: host tools, target library sources, CMake package")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "gcc-arm-none-eabi, libnewlib-arm-none-eabi, cmake, qemu-system-arm, gdb-multiarch")
set(CPACK_STRIP_FILES ON)
set(CPACK_OUTPUT_FILE_PREFIX ${CMAKE_BINARY_DIR}/package)
include(CPack)
