// libFuzzer target: a whole FLAC file (marker, metadata, frames) as untrusted bytes.
// Bad input must give sigpu::Error, never a crash, a hang or a huge allocation; the serial
// and parallel CPU decoders must agree (fuzz_common.hpp). Ranged decoding (SEEKTABLE or
// frame search over a window that grows) runs over the same bytes, and so does the clip path's
// plan with links by numbers alone, whose windows must lie in the input with their frames end
// to end.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "flac/range_window.hpp"
#include "fuzz_common.hpp"

namespace {

void check_numbered_plan(std::span<const std::uint8_t> in, sigpu::flac::SampleRange range) {
  using namespace sigpu::flac;
  const std::vector<FileRange> ranges{{in, range}, {in, {in.size() % 70000, 4096}}};
  const RangePlan plan = plan_ranges(ranges, Links::numbered);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (!plan.errors[i].empty()) continue;
    const Window& w = plan.windows[i];
    if (w.begin > w.end || w.end > in.size()) sigpu::fuzz::fail("a window outside the input");
    const auto& frames = w.index.frames;
    for (std::size_t k = 0; k < frames.size(); ++k)
      if (frames[k].end <= frames[k].pos || (k && frames[k].pos != frames[k - 1].end))
        sigpu::fuzz::fail("an index whose frames are not end to end");
    if (!frames.empty() && (frames.front().pos != 0 || frames.back().end != w.end - w.begin))
      sigpu::fuzz::fail("an index that does not fill its window");
  }
}

}  // namespace

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
  try {
    check_numbered_plan(in, range);
  } catch (const sigpu::Error&) {
  }
  return 0;
}
