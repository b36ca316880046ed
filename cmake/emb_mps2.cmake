# Firmware for QEMU's MPS2 boards (ports/cortex-m/mps2): the target library built from
# its sources for one Cortex-M core, with the board's start-up code and linker script and
# the port's linker fragments, into one ELF.
#
#   emb_mps2_firmware(TARGET OUTPUT elf CPU cortex-m3 SOURCES a.c ... [DEFINES X=1 ...]
#                     [OPTIONS -Os ...] [INCLUDES dir ...] [FULL_NEWLIB | PICOLIBC])
#
# builds `elf` (a custom target TARGET, part of ALL) with arm-none-eabi-gcc, -O2 unless
# OPTIONS says otherwise, -Wall -Wextra -Werror, against newlib-nano (the full newlib,
# with libnosys's system call stubs, with FULL_NEWLIB; picolibc with PICOLIBC). EMB_MPS2_MACHINE_<cpu> names the QEMU
# machine of each core.

find_program(EMB_ARM_GCC arm-none-eabi-gcc)
find_program(EMB_QEMU_ARM qemu-system-arm)
set(EMB_MPS2_DIR ${PROJECT_SOURCE_DIR}/ports/cortex-m/mps2)
set(EMB_MPS2_CPUS cortex-m3 cortex-m4 cortex-m7)
set(EMB_MPS2_MACHINE_cortex-m3 mps2-an385)
set(EMB_MPS2_MACHINE_cortex-m4 mps2-an386)
set(EMB_MPS2_MACHINE_cortex-m7 mps2-an500)
set(EMB_MPS2_SHORT_cortex-m3 m3)
set(EMB_MPS2_SHORT_cortex-m4 m4)
set(EMB_MPS2_SHORT_cortex-m7 m7)
file(GLOB EMB_MPS2_HEADERS ${PROJECT_SOURCE_DIR}/include/emb/*.h
     ${PROJECT_SOURCE_DIR}/include/emb/internal/*.h)

function(emb_mps2_firmware target)
  cmake_parse_arguments(F "FULL_NEWLIB;PICOLIBC" "OUTPUT;CPU" "SOURCES;DEFINES;OPTIONS;INCLUDES" ${ARGN})
  set(specs --specs=nano.specs)
  if(F_FULL_NEWLIB)
    set(specs --specs=nosys.specs) # the full newlib's stdio links the system calls
  elseif(F_PICOLIBC)
    set(specs --specs=picolibc.specs)
  endif()
  set(port ${PROJECT_SOURCE_DIR}/ports/cortex-m)
  set(library ${EMB_CORE_SOURCES} ${port}/cortex_m.c ${port}/fault.c ${EMB_MPS2_DIR}/startup.c)
  set(defines)
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
    COMMAND ${EMB_ARM_GCC} -mcpu=${F_CPU} -mthumb ${options} -g -std=c11 -Wall -Wextra -Werror
            -ffreestanding -ffunction-sections -fdata-sections -nostartfiles
            -Wl,--gc-sections -Wl,--build-id -L${port} -T ${EMB_MPS2_DIR}/mps2.ld
            ${specs} ${defines}
            -I${PROJECT_SOURCE_DIR}/include -I${port}/include -I${EMB_GEN_DIR}/include
            -I${EMB_MPS2_DIR} ${includes}
            ${F_SOURCES} ${library} -o ${F_OUTPUT}
    DEPENDS ${F_SOURCES} ${library} ${EMB_MPS2_DIR}/mps2.ld ${EMB_MPS2_DIR}/mps2.h
            ${port}/emb.ld ${port}/emb_log.ld ${port}/emb_build_id.ld ${port}/emb_retained.ld
            ${port}/include/emb_port_impl.h ${port}/include/emb/cortex_m.h
            ${port}/cortex_m_internal.h ${EMB_MPS2_HEADERS} emb_trace_events_gen
    COMMENT "Building ${F_OUTPUT} for ${F_CPU}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${F_OUTPUT})
endfunction()
