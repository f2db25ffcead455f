// SIGPU_HD marks logic written once for host and device.
#pragma once

#ifdef __CUDACC__
#define SIGPU_HD __host__ __device__
#define SIGPU_FORCEINLINE __forceinline__
#else
#define SIGPU_HD
#define SIGPU_FORCEINLINE inline __attribute__((always_inline))
#endif

// `#pragma unroll` in device code; nothing for the host compiler, which decides alone (GCC 12
// warns about the pragma however it is silenced).
#ifdef __CUDA_ARCH__
#define SIGPU_UNROLL _Pragma("unroll")
#else
#define SIGPU_UNROLL
#endif

#ifdef __CUDACC__
#include <cstdint>

namespace sigpu {

/// Sixteen bytes to a 16-byte-aligned global address in one store. In PTX because NVVM may
/// split the same store written through an int4 pointer into four (it did in the FLAC parse).
__device__ __forceinline__ void store_global_16(void* p, std::uint32_t a, std::uint32_t b,
                                                std::uint32_t c, std::uint32_t d) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(a), "r"(b), "r"(c), "r"(d)
               : "memory");
}

}  // namespace sigpu
#endif
