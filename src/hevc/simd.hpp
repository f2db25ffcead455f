// Function multi-versioning for the front end's vectorisable kernels (inverse transform, intra
// prediction, adding the residual): the compiler builds an AVX2 clone beside the baseline x86-64
// one and the loader picks it where the CPU has AVX2, so the build stays portable. Elsewhere (not
// x86-64 Linux, or a sanitizer build, whose ifunc resolvers would run before its runtime is set
// up) only the baseline is built.
#pragma once

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SIGPU_HEVC_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SIGPU_HEVC_SANITIZED 1
#endif
#endif

#if defined(__x86_64__) && defined(__linux__) && !defined(SIGPU_HEVC_SANITIZED)
#define SIGPU_HEVC_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SIGPU_HEVC_SIMD_CLONES
#endif

// Hand-written AVX2 kernels (intrinsics), taken at run time where the CPU has AVX2; the
// portable code above stays as their twin elsewhere and is checked against them in the tests.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SIGPU_HEVC_MADD 1
#else
#define SIGPU_HEVC_MADD 0
#endif

#if SIGPU_HEVC_MADD
namespace sigpu::hevc {
/// Whether the CPU has AVX2 (asked once).
inline bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
}  // namespace sigpu::hevc
#endif
