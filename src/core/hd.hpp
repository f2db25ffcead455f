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

/// Sixteen bytes from global memory (16-byte aligned) to the shared-memory address `dst`
/// (16-byte aligned), as copy_async_4: `valid` (0-16) of them read, the rest zeros. Cached in L2
/// only.
__device__ __forceinline__ void copy_async_16(unsigned dst, const void* src, unsigned valid = 16) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(valid)
               : "memory");
}

/// Closes the group of this thread's copy_async_4 and copy_async_16 calls made since the last
/// one.
__device__ __forceinline__ void copy_async_commit() {
  asm volatile("cp.async.commit_group;" ::: "memory");
}

/// Waits until at most `Pending` of this thread's committed groups are still in flight.
template <int Pending>
__device__ __forceinline__ void copy_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(Pending) : "memory");
}

// The bulk copies (cp.async.bulk) are sm_90's; for older GPUs they compile to a trap, and their
// callers must not use them there (FlatOut stages only on sm_90).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define SIGPU_BULK_ASM(...) __trap()
#else
#define SIGPU_BULK_ASM(...) asm volatile(__VA_ARGS__)
#endif

/// Makes this thread's earlier shared-memory writes visible to its later bulk copies
/// (fence.proxy.async: the copies read shared memory through the async proxy).
__device__ __forceinline__ void bulk_fence_shared() {
  SIGPU_BULK_ASM("fence.proxy.async.shared::cta;" ::: "memory");
}

/// `bytes` (a multiple of 16) from the shared-memory address `src` to the global address `dst`,
/// both 16-byte aligned, by the copy engine (cp.async.bulk) without waiting for them: the
/// whole run leaves as whole-line writes, however the warp's other lanes store.
__device__ __forceinline__ void bulk_copy_to_global(void* dst, unsigned src, unsigned bytes) {
  SIGPU_BULK_ASM("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst), "r"(src),
                 "r"(bytes)
                 : "memory");
}

/// Closes the group of this thread's bulk_copy_to_global calls made since the last one.
__device__ __forceinline__ void bulk_commit() {
  SIGPU_BULK_ASM("cp.async.bulk.commit_group;" ::: "memory");
}

/// Waits until at most `Pending` of this thread's committed bulk groups may still read their
/// shared memory.
template <int Pending>
__device__ __forceinline__ void bulk_wait_read() {
  SIGPU_BULK_ASM("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

/// Waits until at most `Pending` of this thread's committed bulk groups are unfinished: the
/// others' writes are done.
template <int Pending>
__device__ __forceinline__ void bulk_wait() {
  SIGPU_BULK_ASM("cp.async.bulk.wait_group %0;" ::"n"(Pending) : "memory");
}

#undef SIGPU_BULK_ASM

}  // namespace sigpu
#endif
