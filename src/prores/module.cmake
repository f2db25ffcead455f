# prores: MOV input through libavformat (optional: without it only raw 'icpf' frames are read),
# and the benchmark's FFmpeg peer through
# libavcodec. SIGPU_PRORES_FFMPEG_STATIC links a static, ProRes-only FFmpeg build instead of
# the system's shared one, for the GPU machine's bundle (Debian's libavcodec drags in ~230 MB):
# point PKG_CONFIG_PATH at its lib/pkgconfig (docs/prores.md says how to build it).
option(SIGPU_PRORES_FFMPEG_STATIC "Link FFmpeg statically (PKG_CONFIG_PATH to a static build)" OFF)
if(SIGPU_PRORES_FFMPEG_STATIC)
  pkg_check_modules(PRORES_AV libavformat libavcodec libavutil)
  if(PRORES_AV_FOUND)
    sigpu_static_ffmpeg(_prores_av_link PRORES_AV)
    set(_prores_av_inc ${PRORES_AV_STATIC_INCLUDE_DIRS})
    target_include_directories(sigpu PRIVATE ${_prores_av_inc})
    target_link_libraries(sigpu PUBLIC ${_prores_av_link})
  endif()
else()
  sigpu_link_pkgconfig(PUBLIC PRORES_AV libavformat libavcodec libavutil)
  set(_prores_av_inc ${PRORES_AV_INCLUDE_DIRS})
endif()
if(PRORES_AV_FOUND)
  target_compile_definitions(sigpu PRIVATE SIGPU_HAVE_LIBAVFORMAT=1)
  target_compile_definitions(sigpu PUBLIC SIGPU_PRORES_HAVE_MOV=1)
  if(TARGET prores_bench)
    target_include_directories(prores_bench PRIVATE ${_prores_av_inc})
    target_compile_definitions(prores_bench PRIVATE SIGPU_HAVE_LIBAVCODEC=1)
  endif()
endif()
