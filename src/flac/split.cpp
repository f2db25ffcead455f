// Cutting a stream at verified frame starts, and a batch into shares, for multi-device decoding.
#include "flac/split.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "flac/backends.hpp"

namespace sigpu::flac {
std::optional<std::pair<Candidate, Candidate>> linked_frames_from(
    std::span<const std::uint8_t> file, const StreamInfo& info, std::uint64_t from) {
  std::uint64_t span =
      std::max<std::uint64_t>(4 * std::max<std::uint64_t>(info.max_frame_size, 8192), 65536);
  ThreadPool alone(1);
  for (;;) {
    const std::uint64_t to = std::min<std::uint64_t>(file.size(), from + span);
    const Stream local;  // the window alone: frames from its first byte, no STREAMINFO
    const std::vector<Candidate> cands =
        search_frames_cpu(file.subspan(from, to - from), local, alone);
    for (const Candidate& c : cands)
      if (c.next >= 0 && cands[c.next].next >= 0) {
        std::pair<Candidate, Candidate> found{c, cands[c.next]};
        found.first.pos += from;
        found.second.pos += from;
        return found;
      }
    if (to == file.size()) return std::nullopt;
    span *= 2;
  }
}

std::vector<StreamPart> split_at_frames(std::span<const std::uint8_t> file, const Stream& stream,
                                        std::size_t parts) {
  const std::uint64_t audio = std::min<std::uint64_t>(stream.audio_offset, file.size());
  const std::uint64_t bytes = file.size() - audio;
  std::vector<StreamPart> out{{0, file.size(), 0}};
  for (std::size_t k = 1; k < parts; ++k) {
    // The cut goes near the part's share of the audio bytes, after the previous cut's frame (a
    // share smaller than a frame gives no part).
    const std::uint64_t target = std::max(audio + bytes / parts * k + bytes % parts * k / parts,
                                          k > 1 ? out.back().begin + 1 : audio);
    if (target >= file.size()) break;
    const auto c = linked_frames_from(file, stream.info, target);
    if (!c) break;
    // The frame has a successor, so a fixed-size frame has the stream's block size (as
    // build_frame_index takes it from the frames; STREAMINFO's may lie).
    const Candidate& f = c->second;
    const std::uint64_t sample = f.variable ? f.number : f.number * f.block_size;
    if (k > 1 && sample <= out.back().first_sample) break;  // numbers that go back: no cut
    out.back().end = f.pos;
    out.push_back({f.pos, file.size(), sample});
  }
  return out;
}

std::vector<std::size_t> share_by_bytes(std::span<const std::uint64_t> sizes, std::size_t parts) {
  parts = std::max<std::size_t>(parts, 1);
  std::uint64_t total = 0;
  for (std::uint64_t s : sizes) total += s;
  std::vector<std::size_t> bounds(parts + 1, sizes.size());
  bounds[0] = 0;
  std::uint64_t before = 0;
  std::size_t share = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    // 2 * (middle byte) * parts / (2 * total), in integers; empty files count as one byte.
    const std::uint64_t mid2 = 2 * before + std::max<std::uint64_t>(sizes[i], 1);
    const std::size_t mine = std::min<std::size_t>(
        parts - 1, static_cast<std::size_t>(static_cast<unsigned __int128>(mid2) * parts /
                                            (2 * std::max<std::uint64_t>(total, 1))));
    while (share < mine) bounds[++share] = i;
    before += sizes[i];
  }
  return bounds;
}

void check_device_list(std::span<const int> devices, std::size_t visible) {
  if (devices.empty()) throw UsageError("the device list is empty");
  std::set<int> seen;
  for (int d : devices) {
    if (d < 0 || static_cast<std::size_t>(d) >= visible)
      throw UsageError("CUDA device " + std::to_string(d) + " does not exist (" +
                       std::to_string(visible) + " visible" +
                       (visible ? ": 0.." + std::to_string(visible - 1) : std::string()) + ")");
    if (!seen.insert(d).second)
      throw UsageError("CUDA device " + std::to_string(d) + " is listed twice");
  }
}

}  // namespace sigpu::flac
