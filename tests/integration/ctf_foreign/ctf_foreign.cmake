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

# barectf: a control loop whose tracer barectf generates here from the YAML configuration.
find_program(BARECTF barectf)
if(BARECTF)
  set(BARECTF_OUT ${CMAKE_CURRENT_BINARY_DIR}/barectf_sensor_tracer)
  add_custom_command(
    OUTPUT ${BARECTF_OUT}/barectf.c ${BARECTF_OUT}/barectf.h ${BARECTF_OUT}/metadata
    COMMAND ${CMAKE_COMMAND} -E make_directory ${BARECTF_OUT}
    COMMAND ${BARECTF} generate --code-dir=${BARECTF_OUT} --headers-dir=${BARECTF_OUT}
            --metadata-dir=${BARECTF_OUT} ${CTF_FOREIGN_DIR}/sensor_barectf.yaml
    DEPENDS ${CTF_FOREIGN_DIR}/sensor_barectf.yaml
    COMMENT "barectf generate sensor_barectf.yaml")
  add_executable(barectf_sensor ${CTF_FOREIGN_DIR}/barectf_sensor.c ${BARECTF_OUT}/barectf.c)
  target_include_directories(barectf_sensor PRIVATE ${BARECTF_OUT})
  # the generated tracer is barectf's code, built with its own warnings
  set_source_files_properties(${BARECTF_OUT}/barectf.c PROPERTIES COMPILE_OPTIONS "-w")
  add_test(NAME test_ctf_barectf
           COMMAND bash ${CTF_FOREIGN_DIR}/test_ctf_barectf.sh $<TARGET_FILE:emb_tool>
                   $<TARGET_FILE:barectf_sensor> ${BARECTF_OUT}/metadata
                   ${CMAKE_CURRENT_BINARY_DIR}/test_ctf_barectf)
else()
  add_test(NAME test_ctf_barectf
           COMMAND sh -c "echo 'SKIP: barectf is not installed (python3-barectf, scripts/install-deps.sh)'; exit 77")
endif()
set_tests_properties(test_ctf_barectf PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 120)

# Our own decoder against libbabeltrace2 on our own CTF: the console demo's and the MPS2
# firmware's traces (the firmware when arm-none-eabi-gcc built it).
if(TARGET console)
  add_test(NAME test_ctf_own
           COMMAND bash ${CTF_FOREIGN_DIR}/test_ctf_own.sh $<TARGET_FILE:emb_tool> $<TARGET_FILE:console>
                   ${CMAKE_BINARY_DIR}/fw/qemu-mps2-m3.elf ${CMAKE_CURRENT_BINARY_DIR}/test_ctf_own)
  set_tests_properties(test_ctf_own PROPERTIES LABELS integration TIMEOUT 180)
endif()
