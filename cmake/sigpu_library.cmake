# The two libraries made from the objects of `sigpu`: libsigpu.so (sigpu_shared, exported as
# sigpu::sigpu) and libsigpu.a (sigpu_static, exported as sigpu::sigpu_static). In this build
# tree sigpu::sigpu and sigpu::sigpu_static name them too. `sigpu` itself keeps every module's
# compile settings and usage requirements; $<BUILD_INTERFACE:sigpu> hands them on here without
# putting `sigpu` into the exported package, whose interface sigpu_install.cmake writes.

set_target_properties(sigpu PROPERTIES POSITION_INDEPENDENT_CODE ON)

add_library(sigpu_static STATIC)
target_link_libraries(sigpu_static PUBLIC $<BUILD_INTERFACE:sigpu>)
set_target_properties(sigpu_static PROPERTIES OUTPUT_NAME sigpu EXPORT_NAME sigpu_static
  ARCHIVE_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)

add_library(sigpu_shared SHARED)
target_link_libraries(sigpu_shared PRIVATE $<BUILD_INTERFACE:sigpu>)
set_target_properties(sigpu_shared PROPERTIES OUTPUT_NAME sigpu EXPORT_NAME sigpu
  VERSION ${PROJECT_VERSION} SOVERSION ${PROJECT_VERSION_MAJOR}
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/lib)
# Archives linked into the shared library (cudart_static, a static FFmpeg) stay private to it.
target_link_options(sigpu_shared PRIVATE LINKER:--exclude-libs,ALL)
if(NOT SIGPU_SANITIZE)
  # A dependency missing from the library's own link shows here, not in a user's program.
  target_link_options(sigpu_shared PRIVATE LINKER:--no-undefined)
endif()

foreach(lib sigpu_static sigpu_shared)
  target_include_directories(${lib} INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
add_library(sigpu::sigpu ALIAS sigpu_shared)
add_library(sigpu::sigpu_static ALIAS sigpu_static)
