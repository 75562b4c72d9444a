# Exported package: find_package(Cocktail) gives Cocktail::core and cocktail_add_plugin().
include(CMakePackageConfigHelpers)

install(DIRECTORY core/include/cocktail DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS cocktail_core EXPORT CocktailTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT CocktailTargets NAMESPACE Cocktail::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cocktail)

configure_package_config_file(cmake/CocktailConfig.cmake.in
  ${PROJECT_BINARY_DIR}/CocktailConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cocktail)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/CocktailConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/CocktailConfig.cmake
  ${PROJECT_BINARY_DIR}/CocktailConfigVersion.cmake
  cmake/CocktailPlugin.cmake
  cmake/plugin-exports.map
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Cocktail)
