// SIGPU_HD marks logic written once for host and device.
#pragma once

#ifdef __CUDACC__
#define SIGPU_HD __host__ __device__
#define SIGPU_FORCEINLINE __forceinline__
#else
#define SIGPU_HD
#define SIGPU_FORCEINLINE inline __attribute__((always_inline))
#endif
