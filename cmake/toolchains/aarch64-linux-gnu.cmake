# Cross-compiling for 64-bit Arm Linux on an x86-64 Debian machine: Debian's
# g++-aarch64-linux-gnu, the arm64 builds of the dependencies installed by multiarch
# (dpkg --add-architecture arm64; scripts/cross-check-arm64 does it all), and qemu-user to run
# what was built (ctest runs each test through CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Programs (glslc, nvcc) are the build machine's; libraries and packages the target's.
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
