# `cmake --install build --prefix P`: libsigpu.so.0 and libsigpu.a in lib/, the public headers in
# include/sigpu/, the CMake package in lib/cmake/sigpu/ (find_package(sigpu) gives sigpu::sigpu,
# the shared library, and sigpu::sigpu_static), lib/pkgconfig/sigpu.pc, bin/sigpu and its man
# page. Read after the modules' module.cmake, so that every dependency is recorded.
include(CMakePackageConfigHelpers)

set(SIGPU_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/sigpu)

# libsigpu.a needs from its user what the library links; libsigpu.so needs nothing.
get_property(_sigpu_static_interface GLOBAL PROPERTY SIGPU_STATIC_INTERFACE)
list(REMOVE_DUPLICATES _sigpu_static_interface)
foreach(dep ${_sigpu_static_interface})
  target_link_libraries(sigpu_static INTERFACE $<INSTALL_INTERFACE:${dep}>)
endforeach()

install(TARGETS sigpu_shared sigpu_static EXPORT sigpuTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
file(GLOB SIGPU_PUBLIC_HEADERS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/include/sigpu/*.hpp)
install(FILES ${SIGPU_PUBLIC_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sigpu)
install(EXPORT sigpuTargets NAMESPACE sigpu:: DESTINATION ${SIGPU_CMAKE_DIR})

get_property(_sigpu_finds GLOBAL PROPERTY SIGPU_CONFIG_FINDS)
list(REMOVE_DUPLICATES _sigpu_finds)
list(JOIN _sigpu_finds "\n" SIGPU_CONFIG_DEPENDENCIES)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/sigpuConfig.cmake.in
  ${PROJECT_BINARY_DIR}/sigpuConfig.cmake INSTALL_DESTINATION ${SIGPU_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/sigpuConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/sigpuConfig.cmake ${PROJECT_BINARY_DIR}/sigpuConfigVersion.cmake
  DESTINATION ${SIGPU_CMAKE_DIR})

get_property(_sigpu_pc_libs GLOBAL PROPERTY SIGPU_PC_LIBS_PRIVATE)
list(REMOVE_DUPLICATES _sigpu_pc_libs)
list(JOIN _sigpu_pc_libs " " SIGPU_PC_LIBS_PRIVATE)
# Relative to the .pc file, so that the installed tree can move.
string(REGEX REPLACE "[^/]+" ".." SIGPU_PC_TO_PREFIX ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
configure_file(${CMAKE_CURRENT_LIST_DIR}/sigpu.pc.in ${PROJECT_BINARY_DIR}/sigpu.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/sigpu.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

if(TARGET sigpu_cli)
  install(TARGETS sigpu_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  include(${CMAKE_CURRENT_LIST_DIR}/sigpu_man.cmake)
endif()
