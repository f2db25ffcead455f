# flac: the benchmark's FFmpeg peer for ranged decoding (FFmpeg's flac demuxer seeking to the
# clips, its decoder on one thread) through libavformat and libavcodec, in process: in the GPU
# bundle the static FFmpeg of scripts/build-static-ffmpeg (SIGPU_PRORES_FFMPEG_STATIC, with the
# flac decoder, parser and demuxer), elsewhere the system's shared one when pkg-config finds it.
# Without either, the bench's ffmpeg rows say so.
if(TARGET flac_bench)
  pkg_check_modules(FLAC_BENCH_AV libavformat libavcodec libavutil)
  if(FLAC_BENCH_AV_FOUND)
    if(SIGPU_PRORES_FFMPEG_STATIC)
      sigpu_static_ffmpeg(_flac_bench_av FLAC_BENCH_AV)
      target_include_directories(flac_bench PRIVATE ${FLAC_BENCH_AV_STATIC_INCLUDE_DIRS})
      target_link_libraries(flac_bench PRIVATE ${_flac_bench_av})
    else()
      target_include_directories(flac_bench PRIVATE ${FLAC_BENCH_AV_INCLUDE_DIRS})
      target_link_libraries(flac_bench PRIVATE ${FLAC_BENCH_AV_LINK_LIBRARIES})
    endif()
    target_compile_definitions(flac_bench PRIVATE SIGPU_FLAC_BENCH_LIBAV=1)
  endif()
endif()
