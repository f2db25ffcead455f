// Decoding on several devices at once (DecodeOptions::devices): a file cut into parts at frame
// starts, a batch into shares by bytes, each piece decoded on its own host thread, the results
// put back in order. The splitting and joining take the per-piece decode as a function, so
// the CPU tests run the same code with a CPU backend that the GPU path runs with CudaDecoder.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

#include <sigpu/flac.hpp>

namespace sigpu::flac {

/// Whether the options ask for the multi-device path (a device list, or more than one part).
bool multi_device(const DecodeOptions& o);

/// Decodes part k of a split file (split_at_frames: the first part the file's start with its
/// metadata, the others runs of whole frames), the options carrying the stream's parameters,
/// no MD5 check. `into`, when not empty, is the part's place in the joined output, sized for the
/// samples the cuts and STREAMINFO predict: a decoder whose PCM has exactly that size may write
/// it there and return a Pcm with its shape and no bytes (CudaDecoder::decode_into), which
/// saves the join a copy of every sample.
using PartDecoder = std::function<Decoded(std::size_t k, std::span<const std::uint8_t> part,
                                          const DecodeOptions& o, std::span<std::uint8_t> into)>;

/// Cuts the file into `parts` parts, decodes them concurrently with `decode_part`, and joins
/// their PCM in order: a part whose sample count differs from what the frame numbers at the
/// cuts say (only damage could do that) is padded with silence or shortened, with a warning,
/// so every later sample stays where a whole-file decode puts it. Damage positions are the
/// file's; the MD5 is checked on the joined PCM (as `o` asks). A file that gives one part is
/// decoded whole by `decode_part`. `out`, when it is the size of the whole PCM as predicted,
/// receives it (the result's pcm then has no bytes; see CudaDecoder::decode_into).
Decoded decode_in_parts(std::span<const std::uint8_t> file, const DecodeOptions& o,
                        std::size_t parts, const PartDecoder& decode_part,
                        std::span<std::uint8_t> out = {});

/// Decodes share k of a batch (files in their order, with their outputs: empty, or one each).
using ShareDecoder = std::function<std::vector<BatchResult>(
    std::size_t k, std::span<const std::span<const std::uint8_t>> files,
    std::span<const std::span<std::uint8_t>> outs, const DecodeOptions& o)>;

/// Splits the files into `shares` contiguous shares of about equal bytes (share_by_bytes) and
/// decodes them concurrently; a share that throws gives its files that error. `outs` as for
/// decode_batch_into.
std::vector<BatchResult> decode_batch_in_shares(
    std::span<const std::span<const std::uint8_t>> files,
    std::span<const std::span<std::uint8_t>> outs, const DecodeOptions& o, std::size_t shares,
    const ShareDecoder& decode_share);

/// The cuda backend over o.devices: decode_in_parts and decode_batch_in_shares with a
/// leased engine per part on devices[k % devices.size()]; `out` as for decode_in_parts.
Decoded decode_multi_device(std::span<const std::uint8_t> file, const DecodeOptions& o,
                            std::span<std::uint8_t> out = {});
std::vector<BatchResult> decode_batch_multi_device(
    std::span<const std::span<const std::uint8_t>> files,
    std::span<const std::span<std::uint8_t>> outs, const DecodeOptions& o);

}  // namespace sigpu::flac
