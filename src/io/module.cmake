# io: 16-bit PNG output through libpng (optional: without it PNG is refused with a message).
pkg_check_modules(IO_PNG IMPORTED_TARGET libpng)
if(IO_PNG_FOUND)
  target_link_libraries(sigpu PRIVATE PkgConfig::IO_PNG)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/io/png.cpp PROPERTIES
                              COMPILE_DEFINITIONS SIGPU_HAVE_LIBPNG=1)
endif()
