// libFuzzer target: an HEVC Annex B byte stream as untrusted bytes, through the decoder (pushed
// in pieces whose sizes the input's first byte sets) and the `info` summary. Bad input must
// become Problems, or InputError / UnsupportedError when nothing is decodable, never a crash, a
// hang, another exception or a huge allocation; a picture is output only with a hash that
// matched or with a problem reported. For a quarter of the inputs (the first byte's top bits:
// the schedule starts threads, several times the cost of a decode of these tiny streams), the
// GPU's schedule (the record pipeline with the stages' CPU twins: pictures parsed side by side,
// WPP rows in parallel, reconstruction from the records) must give the serial decoder's frames,
// problems and verdict.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <sigpu/hevc.hpp>

#include "hevc/schedule.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> in(data, size);
  try {
    sigpu::hevc::summarize(in);
  } catch (const sigpu::InputError&) {
  }
  const sigpu::hevc::DecodeOptions options{.backend = sigpu::Backend::cpu,
                                           .max_luma_samples = 128 * 128};
  sigpu::hevc::Decoder dec(options);
  bool unverified = false;
  std::vector<sigpu::hevc::Frame> frames;
  const std::function<void(const sigpu::hevc::Frame&)> on_frame = [&](const sigpu::hevc::Frame& f) {
    frames.push_back(f);
    if (f.width <= 0 || f.height <= 0 || f.planes[0].size() != std::size_t(f.width) * f.height) {
      std::fprintf(stderr, "fuzz invariant broken: frame %dx%d with %zu luma samples\n", f.width,
                   f.height, f.planes[0].size());
      std::abort();
    }
    unverified |= f.hash == sigpu::hevc::HashStatus::mismatched;
  };
  const std::size_t piece = size ? 1 + data[0] % 64 : 1;
  std::string verdict;
  try {
    for (std::size_t at = 0; at < size; at += piece)
      dec.push(in.subspan(at, std::min(piece, size - at)), on_frame);
    dec.finish(on_frame);
  } catch (const sigpu::InputError& e) {
    verdict = e.what();
  } catch (const sigpu::UnsupportedError& e) {
    verdict = e.what();
  }
  if (unverified && dec.problems().empty()) {
    std::fprintf(stderr, "fuzz invariant broken: hash mismatch without a problem\n");
    std::abort();
  }
  if (size == 0 || (data[0] >> 6) != 3) return 0;
  std::vector<sigpu::hevc::Frame> records_frames;
  std::vector<sigpu::hevc::Problem> records_problems;
  std::string records_verdict;
  try {
    records_problems =
        sigpu::hevc::decode_with({.parallel = true, .records = sigpu::Backend::cpu}, options, in,
                                 [&](const sigpu::hevc::Frame& f) { records_frames.push_back(f); });
  } catch (const sigpu::InputError& e) {
    records_verdict = e.what();
  } catch (const sigpu::UnsupportedError& e) {
    records_verdict = e.what();
  }
  bool same = records_verdict == verdict && records_frames.size() == frames.size();
  for (std::size_t i = 0; same && i < frames.size(); ++i)
    for (int c = 0; c < 3; ++c)
      same &= records_frames[i].planes[c] == frames[i].planes[c] &&
              records_frames[i].poc == frames[i].poc;
  // decode_with returns the problems only when it does not throw.
  if (records_verdict.empty()) {
    same &= records_problems.size() == dec.problems().size();
    for (std::size_t i = 0; same && i < records_problems.size(); ++i)
      same &= records_problems[i].message == dec.problems()[i].message;
  }
  if (!same) {
    std::fprintf(stderr, "fuzz invariant broken: the record pipeline's schedule differs\n");
    std::abort();
  }
  return 0;
}
