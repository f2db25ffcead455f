// Inter-frame SIMD decoding (interframe.hpp): the choice of instruction set, once per process,
// and the cutting of a batch into groups of blocks, one vector's lanes each, which the chosen
// instruction set's group decoder (interframe_isa.hpp) decodes.
#include "turbo/interframe.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "turbo/interframe_isa.hpp"

namespace sigpu::turbo {
namespace {

/// The kernels of every instruction set, Isa's order (scalar has none).
const IsaKernels& kernels(Isa isa) {
  static const std::array<IsaKernels, 3> table{IsaKernels{}, avx2_kernels(), avx512_kernels()};
  return table[static_cast<int>(isa)];
}

bool cpu_has(Isa isa) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  switch (isa) {
    case Isa::scalar:
      return true;
    case Isa::avx2:
      return __builtin_cpu_supports("avx2");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
  }
  return false;
#else
  return isa == Isa::scalar;
#endif
}

Isa choose_isa() {
  const char* forced = std::getenv("SIGPU_TURBO_ISA");
  if (!forced || !*forced) {
    for (Isa isa : {Isa::avx512, Isa::avx2})
      if (cpu_supports(isa)) return isa;
    return Isa::scalar;
  }
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (to_string(isa) != forced) continue;
    if (!cpu_supports(isa))
      throw UnsupportedError("turbo: SIGPU_TURBO_ISA=" + std::string(forced) +
                             ", which this CPU (or this build) does not have");
    return isa;
  }
  throw UsageError("turbo: SIGPU_TURBO_ISA=\"" + std::string(forced) +
                   "\" is not scalar, avx2 or avx512");
}

/// The groups of a batch: block indices ordered by K, cut into runs of at most `lanes` blocks
/// of one K.
std::vector<std::vector<int>> make_groups(const BatchPlan& plan, int lanes) {
  std::vector<int> order(plan.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return plan.blocks[a].K < plan.blocks[b].K; });
  std::vector<std::vector<int>> groups;
  for (int b : order) {
    if (groups.empty() || static_cast<int>(groups.back().size()) == lanes ||
        plan.blocks[groups.back().front()].K != plan.blocks[b].K)
      groups.emplace_back();
    groups.back().push_back(b);
  }
  return groups;
}

template <typename Llr>
bool decode_groups(const GroupKernel<Llr>& kernel, const BatchPlan& plan, const Llr* llr,
                   const DecoderOptions& o, ThreadPool* pool, DecodeResult& r) {
  if (!kernel.decode) return false;
  const auto groups = make_groups(plan, kernel.lanes);
  auto work = [&](std::size_t first, std::size_t end) {
    for (std::size_t i = first; i < end; ++i) kernel.decode(plan, llr, groups[i], o, r);
  };
  if (pool)
    pool->parallel_for(groups.size(), work, 1);
  else
    work(0, groups.size());
  return true;
}

}  // namespace

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return "scalar";
    case Isa::avx2:
      return "avx2";
    case Isa::avx512:
      return "avx512";
  }
  return "?";
}

bool cpu_supports(Isa isa) {
  static const std::array<bool, 3> yes{true, cpu_has(Isa::avx2) && kernels(Isa::avx2).i8.decode,
                                       cpu_has(Isa::avx512) && kernels(Isa::avx512).i8.decode};
  return yes[static_cast<int>(isa)];
}

Isa interframe_isa() {
  static const Isa isa = choose_isa();
  return isa;
}

int interframe_lanes(Isa isa, LlrType t, bool saturating) {
  if (t == LlrType::i8) return saturating ? kernels(isa).i8s.lanes : kernels(isa).i8.lanes;
  if (t == LlrType::i16) return kernels(isa).i16.lanes;
  return 0;
}

bool decode_interframe(const BatchPlan& plan, const std::int8_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r, Isa isa) {
  return cpu_supports(isa) && decode_groups(kernels(isa).i8, plan, llr, o, pool, r);
}
bool decode_interframe(const BatchPlan& plan, const std::int16_t* llr, const DecoderOptions& o,
                       ThreadPool* pool, DecodeResult& r, Isa isa) {
  return cpu_supports(isa) && decode_groups(kernels(isa).i16, plan, llr, o, pool, r);
}
bool decode_interframe_saturating(const BatchPlan& plan, const std::int8_t* llr,
                                  const DecoderOptions& o, ThreadPool* pool, DecodeResult& r,
                                  Isa isa) {
  return cpu_supports(isa) && decode_groups(kernels(isa).i8s, plan, llr, o, pool, r);
}

}  // namespace sigpu::turbo
