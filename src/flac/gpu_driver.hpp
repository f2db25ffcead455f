// The driver around a GPU engine (gpu_engine.hpp): a whole file, a batch or device-resident bytes
// on one engine, finished as every backend's decode is (the report, stop_on_damage, the MD5
// hashed as the PCM lands). A large file in pinned memory decoded into pinned memory is cut into
// parts on engines of its own device, so that one part's copies overlap another's kernels.
// CudaDecoder's methods and the free functions' cuda backend both come here.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include <sigpu/flac.hpp>

#include "flac/gpu_engine.hpp"

namespace sigpu::flac {

/// See CudaDecoder::decode_into: cut into pinned_parts_for() parts on engines of the device.
Decoded gpu_decode(GpuEngine& engine, std::span<const std::uint8_t> file,
                   std::span<std::uint8_t> out, const DecodeOptions& o);
/// The same in one piece on `engine` (a part of a decode the caller has split).
Decoded gpu_decode_whole(GpuEngine& engine, std::span<const std::uint8_t> file,
                         std::span<std::uint8_t> out, const DecodeOptions& o);
/// How many parts a decode of `file` into `out` is cut into on one device: pinned_parts() when
/// both are pinned and the file is large, else 1.
std::size_t pinned_parts_for(GpuEngine& engine, std::span<const std::uint8_t> file,
                             std::span<std::uint8_t> out, const DecodeOptions& o);
/// See decode_batch_into (outs may be empty).
std::vector<BatchResult> gpu_decode_batch(GpuEngine& engine,
                                          std::span<const std::span<const std::uint8_t>> files,
                                          std::span<const std::span<std::uint8_t>> outs,
                                          const DecodeOptions& o);

/// The smallest file gpu_decode cuts into parts when its input and output are pinned (64 MiB;
/// tests lower it to run the parts on small files).
void set_pinned_parts_min_bytes(std::size_t bytes);
std::size_t pinned_parts_min_bytes();
/// How many parts (default 2; 1: none).
void set_pinned_parts(std::size_t parts);
std::size_t pinned_parts();

}  // namespace sigpu::flac
