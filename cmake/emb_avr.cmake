# Firmware for an 8-bit AVR under simavr (ports/avr): the target library built from its
# sources with the port into one ELF, in the tiny profile.
#
#   emb_avr_firmware(TARGET OUTPUT elf SOURCES a.c ... [MCU part] [DEFINES X=1 ...]
#                    [OPTIONS -O2 ...])
#
# builds `elf` (a custom target TARGET, part of ALL) with avr-gcc and avr-libc for MCU
# (default EMB_AVR_MCU) at EMB_AVR_HZ, -Os unless OPTIONS says otherwise, -Wall -Wextra
# -Werror.

find_program(EMB_AVR_GCC avr-gcc)
find_program(EMB_AVR_SIZE avr-size)
set(EMB_AVR_MCU atmega328p)
set(EMB_AVR_HZ 16000000)
set(EMB_AVR_DIR ${PROJECT_SOURCE_DIR}/ports/avr)
file(GLOB EMB_AVR_HEADERS ${PROJECT_SOURCE_DIR}/include/emb/*.h
     ${PROJECT_SOURCE_DIR}/include/emb/internal/*.h ${PROJECT_SOURCE_DIR}/include/emb/profile/*.h)

function(emb_avr_firmware target)
  cmake_parse_arguments(F "" "OUTPUT;MCU" "SOURCES;DEFINES;OPTIONS" ${ARGN})
  set(mcu ${F_MCU})
  if(NOT mcu)
    set(mcu ${EMB_AVR_MCU})
  endif()
  set(library ${EMB_CORE_SOURCES} ${EMB_AVR_DIR}/avr.c ${EMB_AVR_DIR}/atomic.c)
  set(defines -DCONFIG_EMB_PROFILE=EMB_PROFILE_TINY -DF_CPU=${EMB_AVR_HZ}UL)
  foreach(d ${F_DEFINES})
    list(APPEND defines -D${d})
  endforeach()
  set(options ${F_OPTIONS})
  if(NOT options)
    set(options -Os)
  endif()
  # Relative to the source tree, from there: the plain-text log's lines name files by
  # __FILE__, and a short name leaves room in the 80-byte line (gcc-avr 5 has no
  # -fmacro-prefix-map).
  set(relative)
  foreach(src ${F_SOURCES})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${src})
    list(APPEND relative ${rel})
  endforeach()
  get_filename_component(dir ${F_OUTPUT} DIRECTORY)
  add_custom_command(
    OUTPUT ${F_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${dir}
    COMMAND ${EMB_AVR_GCC} -mmcu=${mcu} ${options} -g -std=c11 -Wall -Wextra -Werror
            -ffreestanding -ffunction-sections -fdata-sections -Wl,--gc-sections ${defines}
            -I${PROJECT_SOURCE_DIR}/include -I${EMB_AVR_DIR}/include -I${EMB_GEN_DIR}/include
            ${relative} ${library} -o ${F_OUTPUT}
    DEPENDS ${F_SOURCES} ${library} ${EMB_AVR_DIR}/include/emb_port_impl.h
            ${EMB_AVR_DIR}/include/emb/avr.h ${EMB_AVR_HEADERS} emb_trace_events_gen
    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
    COMMENT "Building ${F_OUTPUT} for ${mcu}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${F_OUTPUT})
endfunction()
