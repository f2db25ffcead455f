// Where every spectrum of a convolver lives, shared by the CPU and CUDA backends: the IR
// partitions, each input's frequency-domain delay line (a ring of spectra) and the paths
// grouped by output, so that one output's sum is computed in one place without atomics.
#pragma once

#include <cstdint>
#include <vector>

#include <sigpu/convolution.hpp>

namespace sigpu::convolution {

/// The part of a path the output's sum needs.
struct Term {
  std::uint32_t input = 0, ir = 0;
};

struct Layout {
  std::uint32_t partition = 0;  ///< B, the period
  std::uint32_t fft_size = 0;   ///< 2B
  std::uint32_t bins = 0;       ///< B + 1 (real-input spectrum)
  std::uint32_t inputs = 0, outputs = 0;
  std::vector<std::uint32_t> ir_partitions;  ///< per IR: ceil(taps / B)
  std::vector<std::uint64_t> ir_offset;      ///< per IR: first spectrum (prefix sum), + total
  std::vector<std::uint32_t> ring_slots;     ///< per input: the longest IR it feeds, in partitions
  std::vector<std::uint64_t> ring_offset;    ///< per input: first spectrum, + total
  std::vector<std::uint32_t> output_begin;   ///< outputs + 1 offsets into terms
  std::vector<Term> terms;                   ///< the paths ordered by output
  std::uint32_t max_partitions = 0;

  std::uint64_t ir_spectra() const { return ir_offset.back(); }
  std::uint64_t ring_spectra() const { return ring_offset.back(); }
};

/// Validates the config and lays it out.
Layout make_layout(const Config& config);

}  // namespace sigpu::convolution
