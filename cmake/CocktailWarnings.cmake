# Warnings for the project's own targets (not for third-party headers), in each language's
# spelling: C++ and HIP go to the compiler (g++ or clang), CUDA to nvcc and, through it, to its
# host compiler (g++).
function(cocktail_set_warnings target)
  set(warnings -Wall -Wextra -Wshadow -Wnon-virtual-dtor)
  # GCC 12 reports impossible std::string memcpy overlaps at -O3 (GCC bug 105329).
  set(gcc_warnings ${warnings} -Wno-restrict)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    set(cxx_warnings ${gcc_warnings})
  else()
    set(cxx_warnings ${warnings})
  endif()
  list(JOIN gcc_warnings "," nvcc_host_warnings)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:${cxx_warnings}>"
    "$<$<COMPILE_LANGUAGE:HIP>:${warnings}>"
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${nvcc_host_warnings}>")
  if(COCKTAIL_WERROR)
    target_compile_options(${target} PRIVATE
      "$<$<COMPILE_LANGUAGE:CXX,HIP>:-Werror>"
      "$<$<COMPILE_LANGUAGE:CUDA>:--Werror=all-warnings;-Xcompiler=-Werror>")
  endif()
endfunction()
