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

# barectf: test programs whose tracers barectf generates here from their YAML
# configurations, sharing one file platform (barectf_file_stream.c).
find_program(BARECTF barectf)
# The test TEST (TEST.sh EMB PROGRAM METADATA SCRATCH) of PROGRAM, built from PROGRAM.c and
# the tracer barectf generates from YAML into <build>/PROGRAM_tracer; nothing generated is
# committed.
function(ctf_barectf_test test program yaml)
  if(NOT BARECTF)
    add_test(NAME ${test}
             COMMAND sh -c "echo 'SKIP: barectf is not installed (python3-barectf, scripts/install-deps.sh)'; exit 77")
    set_tests_properties(${test} PROPERTIES LABELS integration SKIP_RETURN_CODE 77)
    return()
  endif()
  set(out ${CMAKE_CURRENT_BINARY_DIR}/${program}_tracer)
  add_custom_command(
    OUTPUT ${out}/barectf.c ${out}/barectf.h ${out}/metadata
    COMMAND ${CMAKE_COMMAND} -E make_directory ${out}
    COMMAND ${BARECTF} generate --code-dir=${out} --headers-dir=${out} --metadata-dir=${out}
            ${CTF_FOREIGN_DIR}/${yaml}
    DEPENDS ${CTF_FOREIGN_DIR}/${yaml}
    COMMENT "barectf generate ${yaml}")
  add_executable(${program} ${CTF_FOREIGN_DIR}/${program}.c ${CTF_FOREIGN_DIR}/barectf_file_stream.c
                            ${out}/barectf.c)
  target_include_directories(${program} PRIVATE ${out} ${CTF_FOREIGN_DIR})
  # the generated tracer is barectf's code, built with its own warnings
  set_source_files_properties(${out}/barectf.c PROPERTIES COMPILE_OPTIONS "-w")
  add_test(NAME ${test}
           COMMAND bash ${CTF_FOREIGN_DIR}/${test}.sh $<TARGET_FILE:emb_tool> $<TARGET_FILE:${program}>
                   ${out}/metadata ${CMAKE_CURRENT_BINARY_DIR}/${test})
  set_tests_properties(${test} PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 120)
endfunction()
ctf_barectf_test(test_ctf_barectf barectf_sensor sensor_barectf.yaml)
ctf_barectf_test(test_ctf_enum_range barectf_enum enum_barectf.yaml)

# Our own decoder against libbabeltrace2 on our own CTF: the console demo's and the MPS2
# firmware's traces (the firmware when arm-none-eabi-gcc built it).
if(TARGET console)
  add_test(NAME test_ctf_own
           COMMAND bash ${CTF_FOREIGN_DIR}/test_ctf_own.sh $<TARGET_FILE:emb_tool> $<TARGET_FILE:console>
                   ${CMAKE_BINARY_DIR}/fw/qemu-mps2-m3.elf ${CMAKE_CURRENT_BINARY_DIR}/test_ctf_own)
  set_tests_properties(test_ctf_own PROPERTIES LABELS integration TIMEOUT 180)
endif()
