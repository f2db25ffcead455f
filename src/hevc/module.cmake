# HEVC decoder front end. The in-loop filters come from the hevc_filter module when the build
# selects it (SIGPU_MODULES empty or naming it); without it the decoder outputs the unfiltered
# reconstruction and says so.
if(NOT SIGPU_MODULES OR "hevc_filter" IN_LIST SIGPU_MODULE_LIST)
  target_compile_definitions(sigpu PRIVATE SIGPU_HEVC_FILTERS=1)
endif()

# The whole-stream benchmark compares with FFmpeg's HEVC decoder through libavcodec and makes its
# streams with the tests' x265 helper. For the GPU machine's bundle (SIGPU_PRORES_FFMPEG_STATIC,
# PKG_CONFIG_PATH at the static FFmpeg, which has the HEVC decoder, parser and demuxer) the
# system's shared libraries cannot travel: with the prores module selected, it links that FFmpeg
# into sigpu publicly and the bench gets it from there (the system headers are the same
# release); without it, the bench links the static libraries itself.
if(TARGET hevc_bench)
  target_sources(hevc_bench PRIVATE ${PROJECT_SOURCE_DIR}/tests/hevc/streams.cpp)
  if(NOT SIGPU_PRORES_FFMPEG_STATIC)
    pkg_check_modules(HEVC_BENCH_LIBAV REQUIRED IMPORTED_TARGET libavcodec libavformat libavutil)
    target_link_libraries(hevc_bench PRIVATE PkgConfig::HEVC_BENCH_LIBAV)
  elseif(SIGPU_MODULES AND NOT "prores" IN_LIST SIGPU_MODULE_LIST)
    pkg_check_modules(HEVC_BENCH_LIBAV REQUIRED libavformat libavcodec libavutil)
    sigpu_static_ffmpeg(_hevc_bench_av HEVC_BENCH_LIBAV)
    target_include_directories(hevc_bench PRIVATE ${HEVC_BENCH_LIBAV_STATIC_INCLUDE_DIRS})
    target_link_libraries(hevc_bench PRIVATE ${_hevc_bench_av})
  endif()
endif()

# Containers (MP4/MOV, Matroska, MPEG-TS) for hevc::Source through libavformat, optional like
# the prores module's MOV input: without it Source reads Annex B only and refuses containers.
if(SIGPU_PRORES_FFMPEG_STATIC)
  pkg_check_modules(HEVC_AV libavformat libavcodec libavutil)
  if(HEVC_AV_FOUND)
    sigpu_static_ffmpeg(_hevc_av_link HEVC_AV)
    target_include_directories(sigpu PRIVATE ${HEVC_AV_STATIC_INCLUDE_DIRS})
    target_link_libraries(sigpu PUBLIC ${_hevc_av_link})
  endif()
else()
  sigpu_link_pkgconfig(PUBLIC HEVC_AV libavformat libavcodec libavutil)
endif()
if(HEVC_AV_FOUND)
  target_compile_definitions(sigpu PRIVATE SIGPU_HEVC_HAVE_LIBAVFORMAT=1)
endif()
