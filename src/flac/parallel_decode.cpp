#include "flac/parallel_decode.hpp"

#include <algorithm>

#include "flac/frame_host.hpp"

namespace sigpu::flac {
namespace {

std::int32_t find(const std::vector<Candidate>& cands, std::uint64_t pos) {
  auto it = std::lower_bound(cands.begin(), cands.end(), pos,
                             [](const Candidate& c, std::uint64_t p) { return c.pos < p; });
  return it != cands.end() && it->pos == pos ? static_cast<std::int32_t>(it - cands.begin()) : -1;
}

/// Links every candidate to the candidate where its frame, decoded, really ends.
void relink_by_decoding(std::vector<Candidate>& cands, std::span<const std::uint8_t> bytes,
                        unsigned stream_bps) {
  ThreadPool::shared().parallel_for(
      cands.size(),
      [&](std::size_t b, std::size_t e) {
        std::vector<std::int64_t> scratch;
        for (std::size_t i = b; i < e; ++i) {
          const auto r =
              decode_frame_host(bytes.data(), bytes.size(), {cands[i].pos, 0}, stream_bps, true,
                                scratch, [](unsigned, unsigned, std::int32_t) {});
          const std::int32_t next = r.error == FrameError::ok ? find(cands, r.end) : -1;
          cands[i].next = next >= 0 && continues(cands[i], cands[next]) ? next : -1;
        }
      },
      64);
}

ParallelDecodeResult index_and_decode(std::vector<Candidate>& cands, const Stream& stream,
                                      const std::optional<StreamParams>& params, std::uint64_t size,
                                      const FrameProbe& probe, FrameExecutor& executor,
                                      bool* relink) {
  ParallelDecodeResult r;
  r.index = build_frame_index(cands, stream, params, size, probe);
  executor.prepare_output(r.index);
  r.damage = collect_damage(r.index, executor.decode(r.index), relink);
  return r;
}

}  // namespace

std::vector<Damage> collect_damage(const FrameIndex& index, const FrameResults& results,
                                   bool* relink) {
  std::vector<Damage> damage = index.damage;
  *relink = false;
  for (const FrameFailure& x : results.failed) {
    if (x.error == FrameError::relink) *relink = true;
    const FrameEntry& f = index.frames[x.frame];
    damage.push_back(
        {f.pos, f.end - f.pos, x.frame, f.out_sample, f.block_size,
         describe(x.error == FrameError::relink ? FrameError::length_mismatch : x.error)});
  }
  return damage;
}

ParallelDecodeResult decode_in_rounds(std::vector<Candidate>& cands, const Stream& stream,
                                      const std::optional<StreamParams>& params, std::uint64_t size,
                                      const FrameProbe& probe, FrameExecutor& executor,
                                      const HostBytes& host_bytes) {
  bool relink = false;
  ParallelDecodeResult r = index_and_decode(cands, stream, params, size, probe, executor, &relink);
  if (!relink) return r;
  relink_by_decoding(cands, host_bytes(), r.index.bits_per_sample);
  return index_and_decode(cands, stream, params, size, probe, executor, &relink);
}

}  // namespace sigpu::flac
