// libFuzzer target: a whole FLAC file (marker, metadata, frames) as untrusted bytes.
// Bad input must give sigpu::Error, never a crash, a hang or a huge allocation; the serial
// and parallel CPU decoders must agree (fuzz_common.hpp). Ranged decoding (SEEKTABLE or
// frame search over a window that grows) runs over the same bytes.
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  try {
    const sigpu::flac::Stream s = sigpu::flac::parse_stream(in);
    if (s.audio_offset > size) sigpu::fuzz::fail("audio_offset beyond the input");
  } catch (const sigpu::Error&) {
  }
  sigpu::fuzz::decode_both_and_compare(in, {});
  const sigpu::flac::SampleRange range{size % 9000, 1 + size % 5000};
  try {
    const auto d = sigpu::flac::decode_range(
        in, range,
        {.backend = sigpu::Backend::cpu, .max_output_bytes = sigpu::fuzz::kMaxOutputBytes});
    if (d.pcm.samples > range.count) sigpu::fuzz::fail("decode_range gave more than asked");
  } catch (const sigpu::Error&) {
  }
  return 0;
}
