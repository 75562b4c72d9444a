# Included by the top-level CMakeLists.txt when COCKTAIL_BUILD_FUZZERS is on, before the
# packages are found: everything is built with ASan + UBSan and libFuzzer's coverage
# instrumentation, so the fuzz harnesses see inside the parsers they drive.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "COCKTAIL_BUILD_FUZZERS needs clang (libFuzzer); configure with "
                      "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang, or run scripts/fuzz")
endif()

add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -g)
add_link_options(-fsanitize=address,undefined)

# Debian's toml++ is a shared library built without sanitizers; defining the package's target
# first makes the project compile it header-only, instrumented like the rest.
add_library(tomlplusplus::tomlplusplus INTERFACE IMPORTED)
target_compile_definitions(tomlplusplus::tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
