# Run with `cmake -P`: a plugin name split over two lines, as the attention scorer's once was,
# must stop the configure instead of building a plugin under the wrong name.
include(${COCKTAIL_CMAKE_DIR}/CocktailPlugin.cmake)
cocktail_add_plugin(split_name NAME scorer -
                    attention SOURCES plugin_entry.cpp)
message(FATAL_ERROR "cocktail_add_plugin accepted a stray argument")
