# The log benchmark (bench/log_bench.c, run by bench/log.sh): never part of `make check`,
# except a short smoke run labelled `bench`. Built twice: with the default configuration,
# and with CONFIG_EMB_LOG_TIMESTAMP=0 throughout (a copy of the library built so), to show
# what the clock read costs.
if(NOT EMB_SANITIZE AND EMB_PORT STREQUAL "native")
  pkg_check_modules(EMB_LOG_BENCH_LTTNG IMPORTED_TARGET lttng-ust)
  if(EMB_LOG_BENCH_LTTNG_FOUND)
    emb_add_native_library(emb_log_bench_nots)
    target_compile_definitions(emb_log_bench_nots PUBLIC CONFIG_EMB_LOG_TIMESTAMP=0)
    foreach(variant log_bench log_bench_nots)
      add_executable(${variant} ${CMAKE_CURRENT_LIST_DIR}/log_bench.c)
      target_compile_options(${variant} PRIVATE -O2)
      set_target_properties(${variant} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
    endforeach()
    target_link_libraries(log_bench PRIVATE emb PkgConfig::EMB_LOG_BENCH_LTTNG ${CMAKE_DL_LIBS})
    target_link_libraries(log_bench_nots PRIVATE emb_log_bench_nots PkgConfig::EMB_LOG_BENCH_LTTNG
                          ${CMAKE_DL_LIBS})
    add_test(NAME log_bench_smoke COMMAND log_bench --calls 20000 --rounds 1 --threads 1,2)
    set_tests_properties(log_bench_smoke PROPERTIES LABELS bench TIMEOUT 120)
  else()
    message(STATUS "bench: lttng-ust not found, log_bench not built (scripts/install-deps.sh)")
  endif()
endif()
