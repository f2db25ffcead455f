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

/// Four bytes from global memory to the shared-memory address `dst` (a shared-space address,
/// __cvta_generic_to_shared) without waiting for them (cp.async): `valid` (0-4) of them are
/// read, the rest zeros. They are there once a wait covers the group they were committed in.
__device__ __forceinline__ void copy_async_4(unsigned dst, const void* src, unsigned valid = 4) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(valid)
               : "memory");
}

/// Closes the group of this thread's copy_async_4 calls made since the last one.
__device__ __forceinline__ void copy_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

}  // namespace sigpu
#endif
