# Install rules and an exported CMake package: another project can
#   find_package(braid) ; target_link_libraries(app PRIVATE braid::ir braid::catalog braid::passes ...)
include(CMakePackageConfigHelpers)
install(EXPORT braidTargets NAMESPACE braid:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/braidConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/braidConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/braidConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/braidConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/braidConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/braid)
