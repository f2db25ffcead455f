// libFuzzer target: a FLAC stream pushed into StreamDecoder in pieces, with a small window so
// that the input is cut into several windows. Bad input must give sigpu::Error, never a crash, a
// hang or a huge allocation; an undamaged stream must
// decode to what decode() of the whole input gives.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  // The window and the piece size come from the input's length, so the corpus explores them.
  const std::size_t window = std::size_t(4096) << (size % 5);
  const std::size_t piece = 1 + size % 997;
  const sigpu::flac::DecodeOptions o{.backend = sigpu::Backend::cpu,
                                     .max_output_bytes = sigpu::fuzz::kMaxOutputBytes};
  std::vector<std::uint8_t> pcm;
  std::optional<sigpu::flac::Decoded> streamed;
  try {
    sigpu::flac::StreamDecoder dec(
        o,
        [&](const sigpu::flac::Pcm& b) {
          if (b.bytes.size() != b.samples * b.channels * sigpu::flac::bytes_per_sample(b.format))
            sigpu::fuzz::fail("a block's size does not match its shape");
          pcm.insert(pcm.end(), b.bytes.begin(), b.bytes.end());
          if (pcm.size() > o.max_output_bytes) sigpu::fuzz::fail("over max_output_bytes");
        },
        window);
    for (std::size_t at = 0; at < size; at += piece)
      dec.push(in.subspan(at, std::min(piece, size - at)));
    streamed = dec.finish();
  } catch (const sigpu::Error&) {
  }
  const auto whole = sigpu::fuzz::try_decode(in, sigpu::Backend::cpu, o);
  if (!streamed || !whole.decoded) return 0;
  const sigpu::flac::Decoded& w = *whole.decoded;
  if (!w.report.damage.empty() || !streamed->report.damage.empty()) return 0;
  if (streamed->report.frames != w.report.frames) sigpu::fuzz::fail("stream: frame count differs");
  if (pcm.size() != w.pcm.bytes.size() || !std::equal(pcm.begin(), pcm.end(), w.pcm.bytes.begin()))
    sigpu::fuzz::fail("stream: samples differ from the whole decode");
  return 0;
}
