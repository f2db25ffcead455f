// libFuzzer target: an HEVC Annex B byte stream as untrusted bytes, through the decoder and the
// `info` summary. Bad input must become Problems, never a crash, a hang, an exception or a huge
// allocation; a picture is output only with a hash that matched or with a problem reported.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>

#include <sigpu/hevc.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  sigpu::hevc::summarize(in);
  sigpu::hevc::Decoder dec({.backend = sigpu::Backend::cpu, .max_luma_samples = 128 * 128});
  bool unverified = false;
  dec.decode(in, [&](const sigpu::hevc::Frame& f) {
    if (f.width <= 0 || f.height <= 0 || f.planes[0].size() != std::size_t(f.width) * f.height) {
      std::fprintf(stderr, "fuzz invariant broken: frame %dx%d with %zu luma samples\n", f.width,
                   f.height, f.planes[0].size());
      std::abort();
    }
    unverified |= f.hash == sigpu::hevc::HashStatus::mismatched;
  });
  if (unverified && dec.problems().empty()) {
    std::fprintf(stderr, "fuzz invariant broken: hash mismatch without a problem\n");
    std::abort();
  }
  return 0;
}
