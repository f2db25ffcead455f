// Helpers shared by the FLAC fuzz targets: decode on both CPU backends, check what comes out.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>
#include <string>

#include <sigpu/core.hpp>
#include <sigpu/flac.hpp>

namespace sigpu::fuzz {

[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what.c_str());
  std::abort();
}

/// One backend's answer: the decoded stream, or the message of the Error it threw.
struct Outcome {
  Backend backend;
  std::optional<flac::Decoded> decoded;
  std::string error;

  std::string describe() const {
    std::string s(to_string(backend));
    if (!decoded) return s + " threw \"" + error + "\"";
    s += " gave " + std::to_string(decoded->pcm.samples) + " samples, " +
         std::to_string(decoded->report.damage.size()) + " damaged";
    for (const auto& d : decoded->report.damage) s += "\n    " + d.message();
    return s;
  }
};

/// Output bound for the fuzz targets, as a service decoding untrusted files would set it: a few
/// bytes of CONSTANT frames can legally describe hours of audio.
inline constexpr std::uint64_t kMaxOutputBytes = 64u << 20;

/// Decodes with `backend`; bad input must end in sigpu::Error (any other exception escapes
/// and libFuzzer reports it as a crash). Checks the shape of what a successful decode returns.
inline Outcome try_decode(std::span<const std::uint8_t> in, Backend backend,
                          flac::DecodeOptions options) {
  options.backend = backend;
  if (options.max_output_bytes == 0) options.max_output_bytes = kMaxOutputBytes;
  Outcome o{backend, std::nullopt, {}};
  try {
    o.decoded = flac::decode(in, options);
  } catch (const Error& e) {
    o.error = e.what();
    return o;
  }
  const flac::Pcm& p = o.decoded->pcm;
  if (p.bytes.size() != p.samples * p.channels * flac::bytes_per_sample(p.format))
    fail(o.describe() + ": pcm.bytes.size() != samples * channels * bytes_per_sample");
  if (p.bytes.size() > options.max_output_bytes) fail(o.describe() + ": over max_output_bytes");
  if (o.decoded->report.backend != backend) fail(o.describe() + ": report names another backend");
  return o;
}

/// The serial and the parallel CPU decoder must agree: on whether the input decodes at all, on
/// whether it is damaged (neither may pass damage off as good), and, when it is clean, on every
/// sample and the MD5 verdict. How they recover from damage (which span turns to silence) may
/// differ; SIGPU_FUZZ_STRICT=1 in the environment requires identical output there too.
/// A difference aborts, which libFuzzer reports as a crash.
inline void decode_both_and_compare(std::span<const std::uint8_t> in,
                                    const flac::DecodeOptions& options) {
  static const bool strict = [] {
    const char* s = std::getenv("SIGPU_FUZZ_STRICT");
    return s != nullptr && s[0] == '1';
  }();
  const Outcome serial = try_decode(in, Backend::cpu, options);
  const Outcome parallel = try_decode(in, Backend::cpu_parallel, options);
  const auto differ = [&](const char* what) {
    fail(std::string("cpu and cpu-parallel differ: ") + what + "\n  " + serial.describe() + "\n  " +
         parallel.describe());
  };
  if (serial.decoded.has_value() != parallel.decoded.has_value()) differ("one threw");
  if (!serial.decoded) return;
  const flac::Decoded& s = *serial.decoded;
  const flac::Decoded& p = *parallel.decoded;
  const bool damaged = !s.report.damage.empty();
  if (damaged != !p.report.damage.empty()) differ("only one reports damage");
  if (damaged && !strict) return;
  if (s.pcm.samples != p.pcm.samples) differ("sample count");
  if (s.pcm.bytes != p.pcm.bytes) differ("samples");
  if (s.report.damage.size() != p.report.damage.size()) differ("damage count");
  if (s.report.md5 != p.report.md5) differ("MD5 verdict");
}

}  // namespace sigpu::fuzz
