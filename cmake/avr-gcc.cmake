# Cross toolchain for the freestanding target library on an 8-bit AVR (ports/avr), with
# Debian's gcc-avr and avr-libc; the part is EMB_AVR_MCU (default the ATmega328P).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR avr)
set(CMAKE_C_COMPILER avr-gcc)
if(NOT EMB_AVR_MCU)
  set(EMB_AVR_MCU atmega328p)
endif()
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "-mmcu=${EMB_AVR_MCU} -ffreestanding -ffunction-sections -fdata-sections")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,--gc-sections")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
