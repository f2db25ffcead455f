// libFuzzer target: one raw ProRes frame ('icpf' box onwards) as untrusted bytes, decoded,
// and split as a raw stream. Bad input must give sigpu::Error or a damage report, never a
// crash, a hang or an out-of-bounds write; the serial and parallel CPU decoders must agree
// sample for sample.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include <sigpu/prores.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  // Small pictures keep each input well under 10 ms.
  const sigpu::prores::DecodeOptions serial{.backend = sigpu::Backend::cpu, .max_pixels = 1 << 14};
  sigpu::prores::DecodeOptions parallel = serial;
  parallel.backend = sigpu::Backend::cpu_parallel;
  // One precision per input (both are reached: the mutator changes the length).
  const int depth = size % 2 ? 12 : 10;
  sigpu::prores::DecodeReport rs, rp;
  try {
    const auto a = sigpu::prores::decode_frame(in, depth, rs, serial);
    const auto b = sigpu::prores::decode_frame(in, depth, rp, parallel);
    if (a.samples != b.samples || rs.damage.size() != rp.damage.size()) {
      std::fprintf(stderr, "fuzz invariant broken: serial and parallel decoders differ\n");
      std::abort();
    }
  } catch (const sigpu::Error&) {
  }
  // The raw-stream splitter sees the same bytes as a file.
  try {
    const auto clip = sigpu::prores::read_raw({in.begin(), in.end()}, "fuzz");
    for (std::size_t i = 0; i < clip.frames.size(); ++i)
      if (clip.frames[i].offset + clip.frames[i].size > size) std::abort();
  } catch (const sigpu::Error&) {
  }
  return 0;
}
