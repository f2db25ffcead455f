# HEVC decoder front end. The in-loop filters come from the hevc_filter module when the build
# selects it (SIGPU_MODULES empty or naming it); without it the decoder outputs the unfiltered
# reconstruction and says so.
if(NOT SIGPU_MODULES OR "hevc_filter" IN_LIST SIGPU_MODULES)
  target_compile_definitions(sigpu PRIVATE SIGPU_HEVC_FILTERS=1)
endif()

# The whole-stream benchmark compares with FFmpeg's HEVC decoder through libavcodec and makes its
# streams with the tests' x265 helper. For the GPU machine's bundle (SIGPU_PRORES_FFMPEG_STATIC)
# the prores module links its static FFmpeg, which has the HEVC decoder, parser and demuxer, into
# sigpu publicly: the bench gets it from there (the system headers are the same release), not
# the system's shared libraries, which the bundle cannot carry.
if(TARGET hevc_bench)
  target_sources(hevc_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests/hevc/streams.cpp)
  if(NOT SIGPU_PRORES_FFMPEG_STATIC)
    pkg_check_modules(HEVC_BENCH_LIBAV REQUIRED IMPORTED_TARGET libavcodec libavformat libavutil)
    target_link_libraries(hevc_bench PRIVATE PkgConfig::HEVC_BENCH_LIBAV)
  endif()
endif()
