# Firmware for QEMU's RISC-V virt machine (ports/riscv/virt): the target library built
# from its sources for RV32IMAC with the port, the board's start-up code and linker
# script and the port-neutral linker fragments (ports/cortex-m/*.ld), into one ELF.
#
#   emb_riscv_firmware(TARGET OUTPUT elf SOURCES a.c ... [DEFINES X=1 ...] [OPTIONS -Os ...]
#                      [INCLUDES dir ...] [PROFILE tiny|base|isolated])
#
# builds `elf` (a custom target TARGET, part of ALL) with riscv64-unknown-elf-gcc and
# picolibc, -O2 unless OPTIONS says otherwise, -Wall -Wextra -Werror, in the profile named
# (default isolated: the multicore profile, docs/profiles.md).

find_program(EMB_RISCV_GCC riscv64-unknown-elf-gcc)
find_program(EMB_QEMU_RISCV32 qemu-system-riscv32)
set(EMB_RISCV_DIR ${PROJECT_SOURCE_DIR}/ports/riscv)
# ISA specification 2.2: the CSR instructions in the base ISA, and the rv32imac multilib.
set(EMB_RISCV_ARCH -march=rv32imac -misa-spec=2.2 -mabi=ilp32)
file(GLOB EMB_RISCV_HEADERS ${PROJECT_SOURCE_DIR}/include/emb/*.h
     ${PROJECT_SOURCE_DIR}/include/emb/internal/*.h ${PROJECT_SOURCE_DIR}/include/emb/profile/*.h)

function(emb_riscv_firmware target)
  cmake_parse_arguments(F "" "OUTPUT;PROFILE" "SOURCES;DEFINES;OPTIONS;INCLUDES" ${ARGN})
  set(profile ${F_PROFILE})
  if(NOT profile)
    set(profile isolated)
  endif()
  string(TOUPPER ${profile} profile_upper)
  set(port ${EMB_RISCV_DIR})
  set(library ${EMB_CORE_SOURCES} ${port}/riscv.c ${port}/fault.c ${port}/virt/startup.S
      ${port}/virt/virt.c)
  set(defines -DCONFIG_EMB_PROFILE=EMB_PROFILE_${profile_upper})
  foreach(d ${F_DEFINES})
    list(APPEND defines -D${d})
  endforeach()
  set(includes)
  foreach(i ${F_INCLUDES})
    list(APPEND includes -I${i})
  endforeach()
  set(options ${F_OPTIONS})
  if(NOT options)
    set(options -O2)
  endif()
  get_filename_component(dir ${F_OUTPUT} DIRECTORY)
  add_custom_command(
    OUTPUT ${F_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${EMB_RISCV_GCC} ${EMB_RISCV_ARCH} -mcmodel=medany ${options} -g -std=c11
            -Wall -Wextra -Werror -ffreestanding -ffunction-sections -fdata-sections
            -nostartfiles --specs=picolibc.specs -Wl,--gc-sections -Wl,--build-id -Wl,--no-warn-rwx-segments
            -L${PROJECT_SOURCE_DIR}/ports/cortex-m -T ${port}/virt/virt.ld ${defines}
            -I${PROJECT_SOURCE_DIR}/include -I${port}/include -I${EMB_GEN_DIR}/include
            -I${port}/virt ${includes}
            ${F_SOURCES} ${library} -o ${F_OUTPUT}
    DEPENDS ${F_SOURCES} ${library} ${port}/virt/virt.ld ${port}/virt/virt.h
            ${port}/include/emb_port_impl.h ${port}/include/emb/riscv.h ${EMB_RISCV_HEADERS}
            emb_trace_events_gen
    COMMENT "Building ${F_OUTPUT} for RV32IMAC (${profile})"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${F_OUTPUT})
endfunction()
