# Warnings for the project's own targets (not for third-party headers).
function(cocktail_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor)
  # GCC 12 reports impossible std::string memcpy overlaps at -O3 (GCC bug 105329).
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-restrict)
  endif()
  if(COCKTAIL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
