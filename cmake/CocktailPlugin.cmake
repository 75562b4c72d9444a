# cocktail_add_plugin(<target> NAME <kind-name> SOURCES <files...>)
#
# Builds a Cocktail plugin: a MODULE library named `cocktail-<NAME>.so` that exports only its
# entry point; its sources may be C++, CUDA or HIP (a language the project has enabled). Used in
# tree and by out-of-tree plugins (after find_package(Cocktail)). When COCKTAIL_PLUGIN_OUTPUT_DIR
# / COCKTAIL_PLUGIN_INSTALL_DIR are set (in tree), the library is written and installed there.
set(_COCKTAIL_PLUGIN_EXPORTS_MAP ${CMAKE_CURRENT_LIST_DIR}/plugin-exports.map)

function(cocktail_add_plugin target)
  cmake_parse_arguments(ARG "" "NAME" "SOURCES" ${ARGN})
  # A stray word (a name split over two lines, a misspelt keyword) would otherwise vanish
  # silently and leave a plugin built under the wrong name.
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cocktail_add_plugin(${target}): unexpected arguments "
                        "'${ARG_UNPARSED_ARGUMENTS}'; it takes NAME <kind-name> SOURCES <files...>")
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    message(FATAL_ERROR "cocktail_add_plugin(${target}): ${ARG_KEYWORDS_MISSING_VALUES} needs a value")
  endif()
  if(NOT ARG_NAME)
    message(FATAL_ERROR "cocktail_add_plugin(${target}): NAME is required")
  endif()
  add_library(${target} MODULE ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE Cocktail::core)
  set_target_properties(${target} PROPERTIES
    PREFIX ""
    OUTPUT_NAME "cocktail-${ARG_NAME}"
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden
    HIP_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  # Only the entry point leaves the library, not even the C++ runtime's template instances.
  if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
    target_link_options(${target} PRIVATE
      "LINKER:--version-script=${_COCKTAIL_PLUGIN_EXPORTS_MAP}")
  endif()
  if(COMMAND cocktail_set_warnings)
    cocktail_set_warnings(${target})
  endif()
  if(COCKTAIL_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${COCKTAIL_PLUGIN_OUTPUT_DIR})
  endif()
  if(COCKTAIL_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${COCKTAIL_PLUGIN_INSTALL_DIR})
  endif()
endfunction()
