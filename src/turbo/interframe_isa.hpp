// What each instruction set's file of the inter-frame decoder (interframe_avx2.cpp,
// interframe_avx512.cpp) gives interframe.cpp, which picks one at run time: a group decoder and
// its blocks per group for each fixed-point LLR type, null where the build has no such code
// (not x86-64).
#pragma once

#include <cstdint>
#include <span>

#include <sigpu/turbo.hpp>

#include "turbo/plan.hpp"

namespace sigpu::turbo {

template <typename Llr>
struct GroupKernel {
  int lanes = 0;  ///< blocks per group: one per vector lane
  /// Decodes the blocks `members` of plan (one K, at most `lanes` of them) into r.
  void (*decode)(const BatchPlan& plan, const Llr* llr, std::span<const int> members,
                 const DecoderOptions& o, DecodeResult& r) = nullptr;
};

struct IsaKernels {
  GroupKernel<std::int8_t> i8;    ///< int8 LLRs, metrics in 16-bit lanes
  GroupKernel<std::int8_t> i8s;   ///< int8 LLRs, saturating metrics in 8-bit lanes
  GroupKernel<std::int16_t> i16;  ///< int16 LLRs, metrics in 32-bit lanes
};

/// The kernels of one instruction set; call them only where the CPU has it.
IsaKernels avx2_kernels();
IsaKernels avx512_kernels();

}  // namespace sigpu::turbo
