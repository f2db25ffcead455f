// From header candidates (with verified successors) to the list of frames to decode: the
// chain of true frames, the damaged spans between them and where every frame's samples go.
// Runs on the host for every parallel backend; it touches each candidate once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

#include "flac/frame_search.hpp"

namespace sigpu::flac {

struct FrameEntry {
  std::uint64_t pos = 0, end = 0;  ///< header byte .. one past the CRC-16
  std::uint64_t out_sample = 0;    ///< index of the first sample in the output
  std::uint32_t block_size = 0;
};

struct FrameIndex {
  std::vector<FrameEntry> frames;
  std::vector<Damage> damage;  ///< spans already known to be damaged (silence in the output)
  std::vector<std::string> warnings;
  std::uint64_t total_samples = 0;    ///< output length per channel
  std::uint64_t frames_numbered = 0;  ///< frames and damaged frames (DecodeReport's)
  std::uint32_t channels = 0, bits_per_sample = 0, sample_rate = 0;
};

/// The stream parameters every frame must agree with. Throws when a frame header defers to
/// STREAMINFO and neither STREAMINFO nor the caller gives the value.
struct StreamFormat {
  std::uint32_t channels = 0, bits_per_sample = 0, sample_rate = 0;
};
StreamFormat stream_format(const Candidate& first, const Stream& stream,
                           const std::optional<StreamParams>& params);
/// The error for a frame `c` that really changes the stream's parameters from `f` (it continues
/// the last good frame and decodes), naming what changes and where.
Error parameter_change(const StreamFormat& f, const Candidate& c);

/// Decodes the frame of a candidate on the host; returns its end when it is valid (CRC-16
/// included). Used only for frames the parallel search could not verify (the last frame,
/// frames next to damage).
using FrameProbe = std::function<std::optional<std::uint64_t>(const Candidate&, unsigned bps)>;

/// Samples [first, end) of every channel.
struct SampleSpan {
  std::uint64_t first = 0, end = 0;
  bool operator==(const SampleSpan&) const = default;
};

/// The spans of [0, index.total_samples) that no frame of the index covers, in order: the
/// samples of damaged spans, which a decoder leaves silent.
std::vector<SampleSpan> uncovered_samples(const FrameIndex& index);

/// What chain_entry needs of a stream: its STREAMINFO, and where its audio starts.
struct ChainInfo {
  std::uint64_t audio_offset = 0, total_samples = 0;
  std::uint32_t sample_rate = 0;
  std::uint32_t channels = 0, bits_per_sample = 0;
};

/// Frame i of the chain chained_frames looks for in the n candidates (sorted by position), when
/// its first sample is `at` (the block sizes of the ones before): its entry into *out and true
/// when candidate i is where the chain needs it (the first at the audio), agrees with the
/// stream, continues the numbering of candidate i - 1 and, the last, ends the stream's samples.
/// Host and device (the CUDA backend tests the candidates of a fixed block size in parallel).
SIGPU_HD inline bool chain_entry(const Candidate* cands, std::size_t n, std::size_t i,
                                 const ChainInfo& info, std::uint64_t at, FrameEntry* out) {
  const Candidate& head = cands[0];
  const Candidate& c = cands[i];
  const bool last = i + 1 == n;
  auto first_sample = [&](const Candidate& x) {
    return x.variable ? x.number : x.number * std::uint64_t{head.block_size};
  };
  if ((i == 0 && c.pos != info.audio_offset) || c.channels != info.channels ||
      (c.bits_per_sample && c.bits_per_sample != info.bits_per_sample) ||
      (c.sample_rate && c.sample_rate != info.sample_rate) || c.variable != head.variable ||
      (!last &&
       (!continues(c, cands[i + 1]) || (!c.variable && c.block_size != head.block_size))) ||
      first_sample(c) - first_sample(head) != at ||
      (last && at + c.block_size != info.total_samples))
    return false;
  *out = {c.pos, last ? 0 : cands[i + 1].pos, at, c.block_size};
  return true;
}

/// Whether a stream's fixed-strategy frame headers code sample numbers, as flake and libFLAC 1.1
/// coded variable block sizes: libFLAC reads them so when STREAMINFO's block sizes differ. Told
/// from a fixed stream with an odd STREAMINFO by the first frame and the header right after it,
/// whose number is then the first's plus its block size. A decoder then reads such headers as
/// variable ones.
bool fixed_headers_code_samples(const Stream& stream, const Candidate& first,
                                const Candidate& second);

/// The most silence a jump forward in the frame numbers adds, after a frame of `block_size`
/// samples: libFLAC's bound (5 seconds, 50 such blocks, none after a block under 16), which
/// also keeps a forged number from sizing the output.
std::uint64_t max_number_gap(std::uint32_t sample_rate, std::uint32_t block_size);

/// A stream's ChainInfo; none (total_samples 0) without STREAMINFO.
ChainInfo chain_info(const Stream& stream);

/// The frames of a stream whose candidates are one unbroken chain, as build_frame_index lists
/// them, written to out[0 .. cands.size()), or 0 when the candidates are anything else: the
/// first at the audio, every one continuing the numbering of the one before (and, if `linked`,
/// the candidates having their successors, linked to it), all agreeing with STREAMINFO, their
/// samples end to end and as many as STREAMINFO says. Each frame ends where the next starts; the
/// last one's end is left 0: the index takes it from a decode of that frame. Lets a GPU decode
/// start while the links and the index are still being made; the index must then agree (the
/// CUDA backend compares them, index_is_chain).
std::size_t chained_frames(const std::vector<Candidate>& cands, const Stream& stream, bool linked,
                           FrameEntry* out);

/// Whether build_frame_index listed the same frames as chained_frames did, its `chained`
/// frames of as many candidates (the last frame's end aside), told from counts alone: every
/// candidate is a frame of the index and the index found no damage. The index's walk only
/// moves forward, so its frame k is candidate k; a frame that ends short of the next candidate
/// leaves a gap, and a stream that does not start at the audio a leading gap, both damage, so
/// frame k ends where candidate k + 1 starts; its first sample then follows from the numbering
/// as chained_frames checked it. Comparing the frames one by one took 0.15-0.19 ms of the
/// tiled hour on the H100's host, after its kernels; the tests compare them
/// (FlacFrameIndex.IndexIsChainOnlyWhenItListsTheChain).
inline bool index_is_chain(const FrameIndex& index, std::size_t chained) {
  return chained > 0 && index.frames.size() == chained && index.damage.empty();
}

/// A stream shorter than STREAMINFO says is damage (truncation); a longer one only odd.
void check_total_samples(std::uint64_t have, const Stream& stream, std::uint64_t data_size,
                         std::uint64_t frame_number, std::vector<Damage>& damage,
                         std::vector<std::string>& warnings);

/// `cands` sorted by position with `next` filled. Throws Error for streams whose channel
/// count, bit depth or sample rate changes.
FrameIndex build_frame_index(const std::vector<Candidate>& cands, const Stream& stream,
                             const std::optional<StreamParams>& params, std::uint64_t data_size,
                             const FrameProbe& probe);

}  // namespace sigpu::flac
