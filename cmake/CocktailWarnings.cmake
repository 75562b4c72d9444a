# Warnings for the project's own targets (not for third-party headers).
function(cocktail_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor)
  if(COCKTAIL_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
