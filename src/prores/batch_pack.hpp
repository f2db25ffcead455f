// Packing a batch of same-shape frames for the CUDA kernels: one upload holding the coded
// frames (16-byte aligned, as the device bit reader wants 4), the slice descriptors and the
// frame descriptors. Host code shared by the CUDA driver and the kernels' CPU twin test.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "prores/batch_layout.hpp"
#include "prores/frame_parse.hpp"

namespace sigpu::prores {

struct PackedBatch {
  BatchLayout layout;
  std::size_t frames = 0, total_slices = 0;
  std::size_t slices_at = 0, frames_at = 0, upload_size = 0;  ///< byte offsets in the upload
  std::vector<std::size_t> frame_at;
  std::size_t frame_samples = 0;  ///< output samples per frame

  std::size_t coeffs() const {
    return frames * static_cast<std::size_t>(layout.coeffs_per_frame());
  }
  std::size_t mbs() const { return frames * static_cast<std::size_t>(layout.mbs_per_frame()); }
  std::size_t vld_threads() const { return total_slices * static_cast<std::size_t>(layout.planes); }
};

/// Sizes and offsets for a batch (all frames of parsed[0]'s shape). Throws Error past the
/// limits of the descriptors (65535 frames, 4 GiB of coded bytes).
PackedBatch plan_batch(std::span<const std::span<const std::uint8_t>> spans,
                       std::span<const ParsedFrame> parsed);

/// Writes the upload (plan.upload_size bytes) into `upload`.
void pack_batch(const PackedBatch& plan, std::span<const std::span<const std::uint8_t>> spans,
                std::span<const ParsedFrame> parsed, std::uint8_t* upload);

/// The per-slice status words of a finished batch (4 per slice) as damage reports.
void report_batch_status(std::span<const ParsedFrame> parsed,
                         std::span<const std::uint64_t> frame_numbers, const std::uint8_t* status,
                         std::vector<Damage>& damage);

}  // namespace sigpu::prores
