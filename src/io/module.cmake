# io: 16-bit PNG output through libpng (optional: without it PNG is refused with a message).
sigpu_link_pkgconfig(PRIVATE IO_PNG libpng)
if(IO_PNG_FOUND)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/io/png.cpp PROPERTIES
                              COMPILE_DEFINITIONS SIGPU_HAVE_LIBPNG=1)
endif()
