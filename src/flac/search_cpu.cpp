// The all-core CPU backend: parallel frame search, then frames decoded in parallel rounds.
#include <algorithm>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/crc_combine.hpp"
#include "flac/backends.hpp"
#include "flac/frame_host.hpp"
#include "flac/parallel_decode.hpp"

namespace sigpu::flac {
namespace {

constexpr std::size_t kChunk = 1 << 20;

/// The search's chunk for n bytes on `pool`: a megabyte, smaller where that would leave cores
/// idle (a ranged decode's window of a few hundred KB), never below 64 KB.
std::size_t search_chunk(std::size_t n, const ThreadPool& pool) {
  return std::clamp<std::size_t>(n / (2 * std::size_t{pool.size()}), std::size_t{1} << 16, kChunk);
}

/// The first p in [from, to) where d[p] and d[p + 1] are a sync code (is_sync), else `to`; d[p + 1]
/// must be readable for p < to. Compressed audio holds an 0xFF every ~256 bytes and a sync code
/// every ~32 KB: a byte search for 0xFF stops too often, sixteen positions tested at once do not.
std::size_t next_sync(const std::uint8_t* d, std::size_t from, std::size_t to) {
  std::size_t p = from;
#if defined(__SSE2__)
  const __m128i ff = _mm_set1_epi8(char(0xFF)), fe = _mm_set1_epi8(char(0xFE)),
                f8 = _mm_set1_epi8(char(0xF8));
  for (; p + 16 <= to; p += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(d + p + 1));
    const int hits = _mm_movemask_epi8(
        _mm_and_si128(_mm_cmpeq_epi8(a, ff), _mm_cmpeq_epi8(_mm_and_si128(b, fe), f8)));
    if (hits) return p + static_cast<unsigned>(__builtin_ctz(static_cast<unsigned>(hits)));
  }
#endif
  for (; p < to; ++p)
    if (is_sync(d + p)) return p;
  return to;
}

/// Candidates with the CRC-16 of all bytes before each (its prefix CRC), so that every
/// successor test is O(log n) instead of a pass over the frame: hostile input with thousands of
/// false headers would otherwise cost candidates x frame size. Without `crc` the prefixes stay
/// empty (search_headers_cpu).
struct Search {
  std::vector<Candidate> cands;
  std::vector<std::uint16_t> prefix;
};

Search find_candidates(std::span<const std::uint8_t> file, std::size_t from, ThreadPool& pool,
                       const Crc16Shift& shift, bool crc) {
  const std::uint8_t* d = file.data();
  const std::size_t n = file.size();
  const std::size_t chunk = search_chunk(n - std::min(from, n), pool);
  const std::size_t chunks = (n - from + chunk - 1) / chunk;
  struct Part {
    std::vector<Candidate> cands;
    std::vector<std::uint16_t> local;  ///< CRC from the chunk start to each candidate
    std::uint16_t crc = 0;             ///< CRC of the whole chunk
  };
  std::vector<Part> parts(chunks);
  pool.parallel_for(chunks, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) {
      const std::size_t lo = from + k * chunk, hi = std::min(n, lo + chunk);
      Part& part = parts[k];
      std::size_t done = lo;
      // The sync test reads d[p + 1]: the last byte of the file is never a header.
      const std::size_t last = std::min(hi, n - 1);
      for (std::size_t p = lo; (p = next_sync(d, p, last)) < last; ++p) {
        Candidate c;
        if (!header_candidate(d, n, p, kCrcTables.crc8, c)) continue;
        part.cands.push_back(c);
        if (!crc) continue;
        part.crc = crc16_update_host(part.crc, d + done, p - done);
        done = p;
        part.local.push_back(part.crc);
      }
      if (crc) part.crc = crc16_update_host(part.crc, d + done, hi - done);
    }
  });
  Search s;
  std::uint16_t at_chunk = 0;  // CRC of every byte from `from` to this chunk's start
  for (std::size_t k = 0; k < chunks; ++k) {
    const std::size_t lo = from + k * chunk;
    s.cands.insert(s.cands.end(), parts[k].cands.begin(), parts[k].cands.end());
    if (!crc) continue;
    for (std::size_t i = 0; i < parts[k].cands.size(); ++i) {
      s.prefix.push_back(static_cast<std::uint16_t>(
          shift.shift(at_chunk, parts[k].cands[i].pos - lo) ^ parts[k].local[i]));
    }
    at_chunk = static_cast<std::uint16_t>(shift.shift(at_chunk, std::min(n, lo + chunk) - lo) ^
                                          parts[k].crc);
  }
  return s;
}

/// The same rule as find_successor (frame_search.hpp), with the span CRC from prefixes; without
/// prefixes, the number rule alone.
std::int32_t successor_from_prefix(const Search& s, std::uint32_t i, std::uint64_t max_span,
                                   const Crc16Shift& shift) {
  const Candidate& a = s.cands[i];
  for (std::uint32_t j = i + 1; j < s.cands.size(); ++j) {
    const Candidate& b = s.cands[j];
    if (b.pos - a.pos > max_span) break;
    if (continues(a, b) &&
        (s.prefix.empty() || shift.shift(s.prefix[i], b.pos - a.pos) == s.prefix[j]))
      return static_cast<std::int32_t>(j);
  }
  return -1;
}

std::vector<Candidate> search(std::span<const std::uint8_t> file, const Stream& stream,
                              ThreadPool& pool, bool crc) {
  static const Crc16Shift shift;
  Search s = find_candidates(file, std::min<std::size_t>(stream.audio_offset, file.size()), pool,
                             shift, crc);
  const unsigned bps = stream.has_streaminfo ? stream.info.bits_per_sample : 32;
  const auto max_frame = stream.has_streaminfo ? stream.info.max_frame_size : 0;
  pool.parallel_for(
      s.cands.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i)
          s.cands[i].next = successor_from_prefix(s, static_cast<std::uint32_t>(i),
                                                  search_span(s.cands[i], bps, max_frame), shift);
      },
      256);
  return std::move(s.cands);
}

class CpuExecutor : public FrameExecutor {
 public:
  CpuExecutor(std::span<const std::uint8_t> file, const DecodeOptions& o, ThreadPool& pool,
              Pcm& pcm)
      : file_(file), o_(o), pool_(pool), pcm_(pcm) {}

  void prepare_output(const FrameIndex& index) override {
    shape_pcm(pcm_, index, o_);
    const std::uint64_t bytes = output_bytes(index, o_.format, o_.max_output_bytes);
    pcm_.bytes.resize(bytes);
    pool_.parallel_for((bytes + kChunk - 1) / kChunk, [&](std::size_t b, std::size_t e) {
      const std::size_t lo = b * kChunk, hi = std::min<std::size_t>(bytes, e * kChunk);
      std::memset(pcm_.bytes.data() + lo, 0, hi - lo);
    });
  }

  FrameResults decode(const FrameIndex& index) override {
    return decode_span(index, {0, index.total_samples});
  }

  /// Decodes the index's frames, storing samples [keep.first, keep.end) of its output from the
  /// start of the Pcm (a range's window keeps the range alone: no copy cut from it afterwards).
  FrameResults decode_span(const FrameIndex& index, SampleSpan keep) {
    const PcmTarget target{pcm_.bytes.data(),    o_.format,   o_.layout, pcm_.channels,
                           pcm_.bits_per_sample, pcm_.samples};
    const auto n = static_cast<std::uint32_t>(index.frames.size());
    std::vector<FrameError> errors(n);
    std::uint64_t last_end = 0;
    pool_.parallel_for(
        index.frames.size(),
        [&](std::size_t b, std::size_t e) {
          std::vector<std::int64_t> scratch;
          for (std::size_t k = b; k < e; ++k) {
            const FrameEntry& f = index.frames[k];
            const std::uint64_t at = f.out_sample - std::min(f.out_sample, keep.first);
            // Frames inside the span store every sample; the two at its edges check each.
            const bool inside =
                f.out_sample >= keep.first && f.out_sample + f.block_size <= keep.end;
            auto whole = [&](unsigned i, unsigned c, std::int32_t v) {
              store_sample(target, at + i, c, v);
            };
            auto edge = [&](unsigned i, unsigned c, std::int32_t v) {
              const std::uint64_t s = f.out_sample + i;
              if (s >= keep.first && s < keep.end) store_sample(target, s - keep.first, c, v);
            };
            const FrameSpan span{f.pos, f.end};
            const auto r = inside ? decode_frame_host(file_.data(), file_.size(), span,
                                                      index.bits_per_sample, false, scratch, whole)
                                  : decode_frame_host(file_.data(), file_.size(), span,
                                                      index.bits_per_sample, false, scratch, edge);
            errors[k] = r.error;
            if (k + 1 == n) last_end = r.end;
          }
        },
        // Sixteen frames a job, fewer where that would leave cores idle (a range's window).
        std::clamp<std::size_t>(n / (4 * std::size_t{pool_.size()}), 1, 16));
    FrameResults results;
    for (std::uint32_t k = 0; k < n; ++k) results.add(k, n, errors[k], last_end);
    return results;
  }

 private:
  std::span<const std::uint8_t> file_;
  const DecodeOptions& o_;
  ThreadPool& pool_;
  Pcm& pcm_;
};

}  // namespace

std::vector<Candidate> search_frames_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                         ThreadPool& pool) {
  return search(file, stream, pool, true);
}

std::vector<Candidate> search_headers_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                          ThreadPool& pool) {
  return search(file, stream, pool, false);
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

void shape_pcm(Pcm& p, const FrameIndex& index, const DecodeOptions& o) {
  p.format = o.format;
  p.layout = o.layout;
  p.channels = index.channels;
  p.bits_per_sample = index.bits_per_sample;
  p.sample_rate = index.sample_rate;
  p.samples = index.total_samples;
}

std::uint64_t output_bytes(std::uint64_t samples, unsigned channels, SampleFormat format,
                           std::uint64_t max_bytes) {
  const std::uint64_t bytes = samples * channels * bytes_per_sample(format);
  if (max_bytes && bytes > max_bytes)
    throw Error("output would be " + std::to_string(bytes) + " bytes, over the limit of " +
                std::to_string(max_bytes));
  return bytes;
}

DecodeOutput decode_parallel_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                 const DecodeOptions& o) {
  ThreadPool& pool = ThreadPool::shared();
  std::vector<Candidate> cands = search_frames_cpu(file, stream, pool);
  DecodeOutput out;
  CpuExecutor executor(file, o, pool, out.pcm);
  ParallelDecodeResult r = decode_in_rounds(cands, stream, o.params, file.size(), host_probe(file),
                                            executor, [file] { return file; });
  out.damage = std::move(r.damage);
  out.warnings = std::move(r.index.warnings);
  out.frames = r.index.frames.size();
  out.frames_numbered = r.index.frames_numbered;
  return out;
}

std::optional<DecodeOutput> decode_index_cpu(std::span<const std::uint8_t> file,
                                             const FrameIndex& index, const DecodeOptions& o,
                                             SampleSpan keep) {
  DecodeOutput out;
  shape_pcm(out.pcm, index, o);
  keep.end = std::min(keep.end, index.total_samples);
  keep.first = std::min(keep.first, keep.end);
  out.pcm.samples = keep.end - keep.first;
  // The index's frames cover its output end to end: nothing to clear first.
  out.pcm.bytes.resize(output_bytes(out.pcm.samples, index.channels, o.format, o.max_output_bytes));
  CpuExecutor executor(file, o, ThreadPool::shared(), out.pcm);
  const FrameResults r = executor.decode_span(index, keep);
  if (!r.failed.empty() || index.frames.empty() || r.last_end != index.frames.back().end)
    return std::nullopt;
  out.frames = index.frames.size();
  out.frames_numbered = index.frames_numbered;
  return out;
}

}  // namespace sigpu::flac
