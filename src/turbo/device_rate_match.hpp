// Rate matching of a whole transmission on the GPU (cuda/rate_match_kernel.cuh), for the
// transport block simulator's cuda backend; builds without CUDA refuse it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <sigpu/turbo.hpp>

namespace sigpu::turbo {

/// What encode_transport_block() does after coding, on CUDA device `device`: the G bits of
/// transmission p.rv from the code blocks' codewords d0 | d1 | d2 (llr_count(K) bits per code
/// block of plan_transport_block(p), concatenated, 0 or 1). Throws Error for a wrong count and
/// UnsupportedError without CUDA.
std::vector<std::uint8_t> rate_match_on_device(std::span<const std::uint8_t> codewords,
                                               const TransportBlockParams& p, int device);

}  // namespace sigpu::turbo
