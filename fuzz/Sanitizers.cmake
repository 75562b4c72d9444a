# Included by the top-level CMakeLists.txt when COCKTAIL_BUILD_FUZZERS is on, before the
# packages are found: everything is built with ASan + UBSan and libFuzzer's coverage
# instrumentation, so the fuzz harnesses see inside the parsers they drive.
# clang 14 cannot compile the project (lambdas capturing structured bindings).
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR CMAKE_CXX_COMPILER_VERSION VERSION_LESS 16)
  message(FATAL_ERROR "COCKTAIL_BUILD_FUZZERS needs clang 16 or later (libFuzzer), not "
                      "${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}; configure with "
                      "-DCMAKE_CXX_COMPILER=clang++-16 -DCMAKE_C_COMPILER=clang-16, or run scripts/fuzz")
endif()

add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -g)
add_link_options(-fsanitize=address,undefined)

# Debian's toml++ is a shared library built without sanitizers; defining the package's target
# first makes the project compile it header-only, instrumented like the rest.
add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED)
target_compile_definitions(tomlplusplus::tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
