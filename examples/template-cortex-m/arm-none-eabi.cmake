# The cross toolchain: arm-none-eabi-gcc (Debian's gcc-arm-none-eabi, or Arm's release).
# The core's flags (-mcpu, -mthumb) come from emb_add_library(... CPU ...).
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)
set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
