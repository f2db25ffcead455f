# convolution: FFTW (single precision) for the CPU backend, cuFFT for the CUDA backend.
sigpu_link_pkgconfig(PRIVATE FFTW3F REQUIRED fftw3f)
if(SIGPU_HAVE_CUDA)
  sigpu_link_package(PRIVATE CUDA::cufft PACKAGE CUDAToolkit
    PC -L${CUDAToolkit_LIBRARY_DIR} -lcufft)
endif()
