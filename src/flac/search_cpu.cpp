// The parallel frame search and frame decode on all CPU cores.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "flac/backends.hpp"
#include "flac/frame_host.hpp"

namespace sigpu::flac {

std::vector<Candidate> search_frames_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                         ThreadPool& pool) {
  const std::uint8_t* d = file.data();
  const std::size_t n = file.size(), from = std::min<std::size_t>(stream.audio_offset, n);
  constexpr std::size_t kChunk = 1 << 20;
  const std::size_t chunks = (n - from + kChunk - 1) / kChunk;
  std::vector<std::vector<Candidate>> parts(chunks);
  pool.parallel_for(chunks, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      const std::size_t lo = from + k * kChunk, hi = std::min(n, lo + kChunk);
      for (std::size_t p = lo; p < hi; ++p) {
        const void* ff = std::memchr(d + p, 0xFF, hi - p);
        if (!ff) break;
        p = static_cast<const std::uint8_t*>(ff) - d;
        Candidate c;
        if (header_candidate(d, n, p, kCrcTables.crc8, c)) parts[k].push_back(c);
      }
    }
  });
  std::vector<Candidate> cands;
  for (auto& part : parts) cands.insert(cands.end(), part.begin(), part.end());

  const unsigned bps = stream.has_streaminfo ? stream.info.bits_per_sample : 32;
  const auto max_frame = stream.has_streaminfo ? stream.info.max_frame_size : 0;
  const auto count = static_cast<std::uint32_t>(cands.size());
  pool.parallel_for(cands.size(), [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i)
      cands[i].next = find_successor(d, cands.data(), count, static_cast<std::uint32_t>(i),
                                     search_span(cands[i], bps, max_frame), kCrcTables.crc16);
  }, 64);
  return cands;
}

FrameProbe host_probe(std::span<const std::uint8_t> file) {
  return [file](const Candidate& c, unsigned bps) -> std::optional<std::uint64_t> {
    std::vector<std::int64_t> scratch;
    auto r = decode_frame_host(file.data(), file.size(), {c.pos, 0}, bps, true, scratch,
                               [](unsigned, unsigned, std::int32_t) {});
    if (r.error != FrameError::ok) return std::nullopt;
    return r.end;
  };
}

void decode_frames_cpu(std::span<const std::uint8_t> file, const FrameIndex& index, const PcmTarget& target,
                       ThreadPool& pool, std::vector<Damage>& damage) {
  std::mutex mutex;
  pool.parallel_for(index.frames.size(), [&](std::size_t b, std::size_t e) {
    std::vector<std::int64_t> scratch;
    for (std::size_t k = b; k < e; ++k) {
      const FrameEntry& f = index.frames[k];
      auto sink = [&](unsigned i, unsigned c, std::int32_t v) { store_sample(target, f.out_sample + i, c, v); };
      // The search verified this frame's CRC-16 over exactly [pos, end).
      auto r = decode_frame_host(file.data(), file.size(), {f.pos, f.end}, index.bits_per_sample, false, scratch, sink);
      if (r.error != FrameError::ok) {
        std::lock_guard lock(mutex);
        damage.push_back({f.pos, f.end - f.pos, k, f.out_sample, f.block_size, describe(r.error)});
      }
    }
  }, 16);
}

Pcm make_pcm(const FrameIndex& index, SampleFormat format, Layout layout, std::uint64_t max_bytes) {
  Pcm p;
  p.format = format;
  p.layout = layout;
  p.channels = index.channels;
  p.bits_per_sample = index.bits_per_sample;
  p.sample_rate = index.sample_rate;
  p.samples = index.total_samples;
  const std::uint64_t bytes = p.samples * p.channels * bytes_per_sample(format);
  if (max_bytes && bytes > max_bytes)
    throw Error("output would be " + std::to_string(bytes) + " bytes, over the limit of " + std::to_string(max_bytes));
  p.bytes.resize(bytes);
  constexpr std::size_t kChunk = 1 << 22;
  ThreadPool::shared().parallel_for((bytes + kChunk - 1) / kChunk, [&](std::size_t b, std::size_t e) {
    const std::size_t lo = b * kChunk, hi = std::min<std::size_t>(bytes, e * kChunk);
    std::memset(p.bytes.data() + lo, 0, hi - lo);
  });
  return p;
}

}  // namespace sigpu::flac
