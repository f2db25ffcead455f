// The CPU decoders: slices one after another (the reference) or across all cores.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <sigpu/prores.hpp>

#include "prores/frame_parse.hpp"

namespace sigpu::prores {

/// Decodes every slice of a parsed frame into `samples` (laid out as Frame::samples); damaged
/// slices are concealed and reported with `frame_number`.
void decode_slices_cpu(std::span<const std::uint8_t> frame, const ParsedFrame& parsed,
                       std::uint16_t* samples, bool parallel, std::uint64_t frame_number,
                       std::vector<Damage>& damage);

/// The damage records for slice errors found by either backend (errors[i] is slice i's
/// VldError, components[i] the plane it happened in).
void report_slice_errors(const ParsedFrame& parsed, std::span<const int> errors,
                         std::span<const int> components, std::uint64_t frame_number,
                         std::vector<Damage>& damage);

/// An output frame for a parsed frame's shape (samples not yet written).
Frame make_frame(const ParsedFrame& parsed);
/// A frame of that shape with every slice concealed: stands in for an undecodable frame.
Frame concealed_frame(const ParsedFrame& like);

/// Picture and in-picture index of slice `i` of a parsed frame.
void locate_slice(const ParsedFrame& parsed, int i, int& picture, int& index);

}  // namespace sigpu::prores
