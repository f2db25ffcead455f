# convolution: FFTW (single precision) for the CPU backend, cuFFT for the CUDA backend.
pkg_check_modules(FFTW3F REQUIRED IMPORTED_TARGET fftw3f)
target_link_libraries(sigpu PRIVATE PkgConfig::FFTW3F)
if(SIGPU_HAVE_CUDA)
  target_link_libraries(sigpu PRIVATE CUDA::cufft)
endif()
