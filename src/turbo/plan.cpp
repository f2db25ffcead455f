#include "turbo/plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace sigpu::turbo {

BatchPlan make_plan(std::span<const int> K, int subdecoders, std::size_t llr_size) {
  if (K.empty()) throw Error("turbo: zero code blocks to decode");
  if (K.size() > (1u << 24))
    throw Error("turbo: " + std::to_string(K.size()) + " code blocks is too many for one batch");
  if (subdecoders < 1)
    throw Error("turbo: sub-decoders per block P = " + std::to_string(subdecoders) +
                " must be at least 1");
  BatchPlan plan;
  std::map<int, std::uint32_t> perm_offset;
  std::uint64_t llr = 0, bits = 0, subs = 0, bounds = 0;
  for (std::size_t b = 0; b < K.size(); ++b) {
    if (!valid_block_size(K[b]))
      throw Error("turbo: code block " + std::to_string(b) +
                  ": invalid size K = " + std::to_string(K[b]) +
                  " (must be one of the 188 sizes of 36.212 Table 5.1.3-3, 40..6144)");
    auto [it, fresh] = perm_offset.try_emplace(K[b], static_cast<std::uint32_t>(plan.pi.size()));
    if (fresh) {
      const auto pi = qpp_interleaver(K[b]);
      plan.pi.insert(plan.pi.end(), pi.begin(), pi.end());
    }
    BlockDesc d;
    d.K = K[b];
    std::tie(d.f1, d.f2) = qpp_coefficients(K[b]);
    d.P = std::min(subdecoders, K[b]);
    d.llr_offset = static_cast<std::uint32_t>(llr);
    d.bit_offset = static_cast<std::uint32_t>(bits);
    d.perm_offset = it->second;
    d.sub_offset = static_cast<std::uint32_t>(subs);
    d.bound_offset = static_cast<std::uint32_t>(bounds);
    plan.blocks.push_back(d);
    plan.max_sub_len = std::max(plan.max_sub_len, (K[b] + d.P - 1) / d.P);
    llr += llr_count(K[b]);
    bits += K[b];
    subs += d.P;
    bounds += d.P + 1;
  }
  if (llr > 0xFFFFFFFFull)
    throw Error("turbo: batch of " + std::to_string(K.size()) + " blocks is too large");
  if (llr_size != llr)
    throw Error("turbo: LLR buffer holds " + std::to_string(llr_size) + " values, the " +
                std::to_string(K.size()) + " code block(s) need " + std::to_string(llr) +
                " (3 (K + 4) each)");
  plan.total_llr = llr;
  plan.total_bits = static_cast<std::uint32_t>(bits);
  plan.total_subs = static_cast<std::uint32_t>(subs);
  plan.total_bounds = static_cast<std::uint32_t>(bounds);
  return plan;
}

void check_llrs(const BatchPlan& plan, std::span<const float> llr) {
  for (std::size_t i = 0; i < llr.size(); ++i) {
    if (std::isfinite(llr[i])) continue;
    int b = 0;
    while (b + 1 < static_cast<int>(plan.blocks.size()) && plan.blocks[b + 1].llr_offset <= i) ++b;
    const BlockDesc& d = plan.blocks[b];
    const std::size_t j = i - d.llr_offset;
    throw Error("turbo: LLR " + std::to_string(i) + " (code block " + std::to_string(b) + ", d" +
                std::to_string(j / (d.K + 4)) + "[" + std::to_string(j % (d.K + 4)) + "]) is " +
                std::to_string(llr[i]) + " (not finite)");
  }
}

std::vector<std::uint32_t> crc24_weights(int n, BlockCrc crc) {
  const std::uint8_t one = 1;
  const std::span<const std::uint8_t> bit(&one, 1);
  const std::uint32_t g = crc == BlockCrc::crc24a ? crc24a(bit) : crc24b(bit);  // the generator
  std::vector<std::uint32_t> w(n);
  std::uint32_t r = g;
  for (int j = 0; j < n; ++j) {
    w[j] = r;
    r = ((r << 1) & 0xFFFFFFu) ^ ((r >> 23) & 1u ? g : 0u);  // one more zero bit
  }
  return w;
}

void check_frac_bits(int frac_bits, int bits) {
  if (frac_bits < 0 || frac_bits >= bits)
    throw Error("turbo: fractional bits " + std::to_string(frac_bits) + " out of range for int" +
                std::to_string(bits));
}

void check_options(const DecoderOptions& o) {
  if (o.iterations < 1 || o.iterations > 64)
    throw Error("turbo: iterations = " + std::to_string(o.iterations) + " (must be 1..64)");
  if (!(o.scaling > 0.0f && o.scaling <= 1.0f))
    throw Error("turbo: extrinsic scaling = " + std::to_string(o.scaling) + " (must be in (0, 1])");
  if (o.subdecoders < 1)
    throw Error("turbo: sub-decoders per block P = " + std::to_string(o.subdecoders) +
                " must be at least 1");
  if (o.min_iterations < 1 || o.min_iterations > o.iterations)
    throw Error("turbo: min_iterations = " + std::to_string(o.min_iterations) +
                " (must be 1..iterations = " + std::to_string(o.iterations) + ")");
  if (o.early_termination && o.sync == Sync::loose)
    throw Error(
        "turbo: early termination needs strict sync (in loose mode a block's "
        "sub-decoders never finish an iteration together)");
}

}  // namespace sigpu::turbo
