# Cross toolchain for the freestanding target library on RV32IMAC (ports/riscv), with
# Debian's riscv64-unknown-elf-gcc and its rv32imac/ilp32 multilib. ISA specification 2.2
# keeps the CSR instructions in the base ISA, as the port's machine-mode code needs.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_C_FLAGS_INIT "-march=rv32imac -misa-spec=2.2 -mabi=ilp32 -mcmodel=medany -ffreestanding -ffunction-sections -fdata-sections --specs=picolibc.specs")
set(CMAKE_EXE_LINKER_FLAGS_INIT "-nostartfiles -Wl,--gc-sections")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
