# Foreign CTF (docs/ctf-foreign.md): traces from real producers read through
# libbabeltrace2 by emb inspect, trace and diff. Included from tests/CMakeLists.txt.
set(CTF_FOREIGN_DIR ${CMAKE_CURRENT_LIST_DIR})

# LTTng-UST: a request server with its own tracepoint provider, traced by real sessions.
pkg_check_modules(CTF_LTTNG_UST IMPORTED_TARGET lttng-ust)
if(CTF_LTTNG_UST_FOUND)
  add_executable(lttng_reqsrv ${CTF_FOREIGN_DIR}/lttng_reqsrv.c)
  target_include_directories(lttng_reqsrv PRIVATE ${CTF_FOREIGN_DIR})
  target_link_libraries(lttng_reqsrv PRIVATE PkgConfig::CTF_LTTNG_UST ${CMAKE_DL_LIBS})
  add_test(NAME test_ctf_lttng
           COMMAND bash ${CTF_FOREIGN_DIR}/test_ctf_lttng.sh $<TARGET_FILE:emb_tool>
                   $<TARGET_FILE:lttng_reqsrv> ${CMAKE_CURRENT_BINARY_DIR}/test_ctf_lttng)
else()
  add_test(NAME test_ctf_lttng
           COMMAND sh -c "echo 'SKIP: liblttng-ust-dev is not installed (scripts/install-deps.sh)'; exit 77")
endif()
set_tests_properties(test_ctf_lttng PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 180)
