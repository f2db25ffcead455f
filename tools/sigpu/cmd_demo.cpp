// `sigpu demo`: a self-contained check and benchmark. It synthesizes music, encodes it with
// libFLAC (16- and 24-bit), decodes it with libFLAC and every sigpu backend this machine has,
// and shows that each output is the original, sample for sample, with speed figures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

#include "commands.hpp"
#include "demo_signal.hpp"
#include "libflac_codec.hpp"
#include "progress.hpp"

namespace sigpu::cli {
namespace {

struct DemoArgs {
  double seconds = 20;
  int runs = 5;
  std::uint64_t seed = 1;
  std::string write_dir;
};

struct Row {
  std::string signal, decoder;
  double best_seconds = 0;
  bool exact = false;
  std::string md5;
  std::string error;
};

bool same_samples(const flac::Pcm& pcm, const std::vector<std::int32_t>& want) {
  return pcm.format == flac::SampleFormat::raw32 && pcm.layout == flac::Layout::interleaved &&
         pcm.bytes.size() == want.size() * 4 &&
         std::memcmp(pcm.bytes.data(), want.data(), pcm.bytes.size()) == 0;
}

std::string md5_word(flac::Md5Check m) {
  switch (m) {
    case flac::Md5Check::match:
      return "match";
    case flac::Md5Check::mismatch:
      return "MISMATCH";
    case flac::Md5Check::not_set:
      return "not set";
    case flac::Md5Check::skipped:
      return "skipped";
  }
  return "?";
}

/// The first call warms up (thread pool, CUDA context, buffers) and is not timed; every call's
/// output is checked.
template <typename Decode>
void time_runs(Row& row, int runs, Decode&& decode) {
  row.exact = decode();
  row.best_seconds = std::numeric_limits<double>::infinity();
  for (int r = 0; r < runs; ++r) {
    auto clock = std::chrono::steady_clock::now();
    const bool exact = decode();
    row.best_seconds = std::min(row.best_seconds, seconds_since(clock));
    row.exact = row.exact && exact;
  }
}

Row bench_sigpu(const std::string& signal, std::span<const std::uint8_t> file, Backend backend,
                const std::vector<std::int32_t>& want, int runs) {
  Row row;
  row.signal = signal;
  row.decoder = to_string(backend);
  try {
    flac::DecodeOptions opt;
    opt.backend = backend;
    std::optional<flac::CudaDecoder> gpu;  // kept across runs, as a real pipeline would
    if (backend == Backend::cuda) gpu.emplace(0);
    flac::Md5Check md5 = flac::Md5Check::match;
    time_runs(row, runs, [&] {
      const auto d = gpu ? gpu->decode(file, opt) : flac::decode(file, opt);
      if (d.report.md5 != flac::Md5Check::match) md5 = d.report.md5;
      return d.report.damage.empty() && same_samples(d.pcm, want);
    });
    row.md5 = md5_word(md5);
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}

#ifdef SIGPU_HAVE_LIBFLAC
Row bench_libflac(const std::string& signal, std::span<const std::uint8_t> file,
                  const std::vector<std::int32_t>& want, int runs) {
  Row row;
  row.signal = signal;
  row.decoder = "libFLAC";
  try {
    bool md5_ok = true;
    time_runs(row, runs, [&] {
      const auto d = libflac_decode(file, want.size());
      md5_ok = md5_ok && d.md5_ok;
      return d.samples == want;
    });
    row.md5 = md5_ok ? "match" : "MISMATCH";
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}
#endif

std::vector<Backend> available_backends() {
  std::vector<Backend> b = {Backend::cpu, Backend::cpu_parallel};
  if (cuda_compiled() && !cuda_devices().empty()) b.push_back(Backend::cuda);
  return b;
}

void write_file(const std::string& path, std::span<const std::uint8_t> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  if (!out) throw Error("cannot write '" + path + "'");
}

void print_table(const std::vector<Row>& rows, double audio_seconds,
                 const std::vector<double>& pcm_mb) {
  std::printf("\n%-7s %-13s %9s %10s %11s %10s %9s\n", "signal", "decoder", "best ms", "PCM MB/s",
              "x realtime", "bit-exact", "MD5");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (!r.error.empty()) {
      std::printf("%-7s %-13s  error: %s\n", r.signal.c_str(), r.decoder.c_str(), r.error.c_str());
      continue;
    }
    std::printf("%-7s %-13s %9.2f %10.1f %11.0f %10s %9s\n", r.signal.c_str(), r.decoder.c_str(),
                r.best_seconds * 1e3, pcm_mb[i] / r.best_seconds, audio_seconds / r.best_seconds,
                r.exact ? "yes" : "NO", r.md5.c_str());
  }
}

int run_demo(const DemoArgs& a) {
#ifndef SIGPU_HAVE_LIBFLAC
  (void)a;
  throw Error("the demo encodes its signal with libFLAC, and this build has no libFLAC");
#else
  auto clock = std::chrono::steady_clock::now();
  const auto signal = synthesize_demo(a.seconds, a.seed);
  const double audio_seconds = double(signal.frames()) / signal.sample_rate;
  std::printf("sigpu demo: %.1f s of synthesized music (seed %llu), %u Hz stereo, made in %.2f s\n",
              audio_seconds, static_cast<unsigned long long>(a.seed), signal.sample_rate,
              seconds_since(clock));
  const auto backends = available_backends();
  if (backends.back() != Backend::cuda)
    std::printf("cuda: %s\n", cuda_compiled() ? "no device visible" : "not compiled in");

  std::vector<Row> rows;
  std::vector<double> pcm_mb;
  for (unsigned bits : {16u, 24u}) {
    const auto pcm = quantize(signal.samples, bits, a.seed);
    clock = std::chrono::steady_clock::now();
    const auto file = libflac_encode(pcm, signal.channels, bits, signal.sample_rate, 5);
    const double mb = double(pcm.size()) * (bits / 8) / 1e6;
    std::printf("%2u-bit: %.2f MB of PCM -> %.2f MB FLAC (%.1f %%), libFLAC -5 in %.2f s\n", bits,
                mb, double(file.size()) / 1e6, 100.0 * double(file.size()) / 1e6 / mb,
                seconds_since(clock));
    if (!a.write_dir.empty())
      write_file(
          (std::filesystem::path(a.write_dir) / ("demo-" + std::to_string(bits) + "bit.flac"))
              .string(),
          file);

    const std::string name = std::to_string(bits) + "-bit";
    rows.push_back(bench_libflac(name, file, pcm, a.runs));
    for (Backend b : backends) rows.push_back(bench_sigpu(name, file, b, pcm, a.runs));
    pcm_mb.resize(rows.size(), mb);
  }
  print_table(rows, audio_seconds, pcm_mb);

  bool ok = true;
  for (const auto& r : rows) ok = ok && r.error.empty() && r.exact && r.md5 == "match";
  std::printf("\n%s\n", ok ? "every decoder returned the original samples"
                           : "FAILED: some decoder did not return the original samples");
  return ok ? kExitOk : kExitDamaged;
#endif
}

void add_demo_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<DemoArgs>();
  auto* cmd = app.add_subcommand(
      "demo", "Synthesize music, encode it with libFLAC, decode it with every backend, compare");
  cmd->add_option("--seconds", args->seconds, "Length of the signal")
      ->check(CLI::Range(1.0, 3600.0))
      ->capture_default_str();
  cmd->add_option("--runs", args->runs, "Timed runs per decoder (the best is shown)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of the synthesized signal")->capture_default_str();
  cmd->add_option("--write", args->write_dir, "Also save the encoded files in this directory")
      ->check(CLI::ExistingDirectory);
  cmd->callback([&action, args] { action = [args] { return run_demo(*args); }; });
}

const CommandRegistration registration{20, add_demo_command};
}  // namespace

}  // namespace sigpu::cli
