// libFuzzer target: one raw ProRes frame ('icpf' box onwards) as untrusted bytes, decoded,
// and split as a raw stream (resynchronising past bad size fields). Bad input must give
// sigpu::Error or a damage report, never a crash, a hang or an out-of-bounds write; the serial and
// parallel CPU decoders must agree sample for sample.
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
  // The raw-stream splitter sees the same bytes as a file: frames and skipped ranges lie
  // inside the input, in order, without overlapping; the first frames decode.
  try {
    const auto clip = sigpu::prores::read_raw({in.begin(), in.end()}, "fuzz");
    std::uint64_t end = 0;
    for (const auto& f : clip.frames) {
      if (f.offset < end || f.offset + f.size > size) std::abort();
      end = f.offset + f.size;
    }
    for (const auto& d : clip.skipped)
      if (d.bytes == 0 || d.offset + d.bytes > size) std::abort();
    sigpu::prores::decode(clip, serial, 0, 4);
  } catch (const sigpu::Error&) {
  }
  return 0;
}
