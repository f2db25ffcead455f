// Splitting work between devices by bytes: a long stream cut at frame starts into parts, a
// list of files into contiguous shares. Pure host functions, so the cuts and their order are
// tested without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include <sigpu/flac.hpp>

#include "flac/frame_search.hpp"

namespace sigpu::flac {

/// Bytes [begin, end) of a file. The first part starts at byte 0, metadata and all, so that its
/// decode treats the stream's start (leading damage, lost first frames) as a whole-file decode
/// does; every other part starts at a frame whose CRC-16 link to the next frame checks, just
/// after a frame whose link to it checks: parts are runs of whole frames, and no damage
/// touches a cut. first_sample is the sample the part's first frame header codes (0 for the
/// first part).
struct StreamPart {
  std::uint64_t begin = 0, end = 0, first_sample = 0;
};

/// The first frame at or after byte `from` that the frame search verifies twice over (its
/// CRC-16 link to the next frame checks, and that frame's link to the one after it), and that
/// next frame, which starts right where a good frame ends: searched over a window that doubles
/// until it holds them or reaches the end of `file` (the last frames have no link: no place to
/// cut). Positions are `file`'s. The next frame is where a cut can go.
std::optional<std::pair<Candidate, Candidate>> linked_frames_from(
    std::span<const std::uint8_t> file, const StreamInfo& info, std::uint64_t from);

/// At most `parts` parts of about equal audio bytes that cover the file in order, without gaps or
/// overlaps; fewer when the stream has fewer frames (a cut needs three linked frames after its
/// share's start, and the frame numbers must go forward).
std::vector<StreamPart> split_at_frames(std::span<const std::uint8_t> file, const Stream& stream,
                                        std::size_t parts);

/// Contiguous shares of items by their sizes: share k is items [bounds[k], bounds[k + 1]),
/// each item going to the share its middle byte falls in, so the shares hold about equal bytes
/// (an item larger than a share takes it whole). bounds has parts + 1 entries; shares may be
/// empty.
std::vector<std::size_t> share_by_bytes(std::span<const std::uint64_t> sizes, std::size_t parts);

/// Checks a device list against the number of visible devices: throws Error naming the first
/// index that does not exist or is listed twice, or when the list is empty.
void check_device_list(std::span<const int> devices, std::size_t visible);

}  // namespace sigpu::flac
