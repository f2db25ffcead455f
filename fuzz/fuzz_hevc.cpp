// libFuzzer target: an HEVC Annex B byte stream as untrusted bytes, through the decoder (pushed
// in pieces whose sizes the input's first byte sets) and the `info` summary. Bad input must
// become Problems, or InputError / UnsupportedError when nothing is decodable, never a crash, a
// hang, another exception or a huge allocation; a picture is output only with a hash that
// matched or with a problem reported.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>

#include <sigpu/hevc.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  try {
    sigpu::hevc::summarize(in);
  } catch (const sigpu::InputError&) {
  }
  sigpu::hevc::Decoder dec({.backend = sigpu::Backend::cpu, .max_luma_samples = 128 * 128});
  bool unverified = false;
  const std::function<void(const sigpu::hevc::Frame&)> on_frame = [&](const sigpu::hevc::Frame& f) {
    if (f.width <= 0 || f.height <= 0 || f.planes[0].size() != std::size_t(f.width) * f.height) {
      std::fprintf(stderr, "fuzz invariant broken: frame %dx%d with %zu luma samples\n", f.width,
                   f.height, f.planes[0].size());
      std::abort();
    }
    unverified |= f.hash == sigpu::hevc::HashStatus::mismatched;
  };
  const std::size_t piece = size ? 1 + data[0] % 64 : 1;
  try {
    for (std::size_t at = 0; at < size; at += piece)
      dec.push(in.subspan(at, std::min(piece, size - at)), on_frame);
    dec.finish(on_frame);
  } catch (const sigpu::InputError&) {
  } catch (const sigpu::UnsupportedError&) {
  }
  if (unverified && dec.problems().empty()) {
    std::fprintf(stderr, "fuzz invariant broken: hash mismatch without a problem\n");
    std::abort();
  }
  return 0;
}
