// `sigpu turbo sim` (BER/FER of code blocks over Eb/N0, or with --tbs BLER of transport blocks
// with HARQ over SNR) and `sigpu turbo bench` (decoder throughput).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

#include <sigpu/turbo.hpp>

#include "commands.hpp"

namespace sigpu::cli {
namespace {

struct SimArgs {
  int K = 6144;
  int iterations = 6;
  std::string algorithm = "max-log";
  int P = 1;
  float scaling = 0.75f;
  std::string llr = "float";
  std::string int8_metrics = "auto";
  int frac_bits = -1;
  std::string backend = "auto";
  std::string modulation;  // empty: bpsk, or qpsk with --tbs
  std::string sync = "strict";
  double ebn0_from = 0.5, ebn0_to = 1.0, ebn0_step = 0.25;
  std::uint64_t frames = 1000, target_errors = 0, seed = 1, first_frame = 0;
  int batch = 64;
  bool early_termination = false;
  int min_iterations = 1;
  // Transport blocks (--tbs).
  bool tb_mode = false;  // --tbs given
  int tbs = 0;
  std::int64_t coded_bits = 0;
  double rate = 0.5;
  int max_tx = 4;
  std::string channel = "awgn";
  double snr_from = 0, snr_to = 10, snr_step = 2;
};

// A value the library refuses (sigpu::Error itself, not one of its usage/input/... classes) is a
// bad option here: exit 2.
template <class F>
auto as_usage(F f) {
  try {
    return f();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    if (typeid(e) != typeid(Error)) throw;
    throw UsageError(e.what());
  }
}

void check_range(const char* name, double from, double to, double step) {
  if (!std::isfinite(from) || !std::isfinite(to) || !std::isfinite(step))
    throw UsageError(std::string("--") + name + "-from, -to and -step must be finite");
  if (from > to)
    throw UsageError(std::string("--") + name + "-from " + std::to_string(from) + " is above --" +
                     name + "-to " + std::to_string(to));
  if (step <= 0) throw UsageError(std::string("--") + name + "-step must be positive");
}

turbo::LlrType parse_llr(const std::string& s) {
  return s == "int16" ? turbo::LlrType::i16
                      : (s == "int8" ? turbo::LlrType::i8 : turbo::LlrType::f32);
}

turbo::Int8Metrics parse_int8_metrics(const std::string& s) {
  return s == "exact"
             ? turbo::Int8Metrics::exact
             : (s == "saturating" ? turbo::Int8Metrics::saturating : turbo::Int8Metrics::automatic);
}

// Under a simulation's header where the CPU decodes: which of its decoders (docs/turbo.md).
void print_cpu_decoder(turbo::LlrType t, const turbo::DecoderOptions& d) {
  if (resolve(d.backend) != Backend::cuda)
    std::printf("cpu decoder: %s\n", turbo::cpu_decoder(t, d).c_str());
}

turbo::DecoderOptions decoder_options(const SimArgs& a) {
  return {.backend = parse_backend(a.backend),
          .algorithm =
              a.algorithm == "log-map" ? turbo::Algorithm::log_map : turbo::Algorithm::max_log_map,
          .iterations = a.iterations,
          .subdecoders = a.P,
          .scaling = a.algorithm == "log-map" ? 1.0f : a.scaling,
          .sync = a.sync == "loose" ? turbo::Sync::loose : turbo::Sync::strict,
          .early_termination = a.early_termination,
          .min_iterations = a.min_iterations,
          .int8_metrics = parse_int8_metrics(a.int8_metrics)};
}

int run_tb_sim(const SimArgs& a) {
  check_range("snr", a.snr_from, a.snr_to, a.snr_step);
  if (a.frames == 0) throw UsageError("-n/--frames must be at least 1");
  turbo::TransportSimOptions o;
  o.A = a.tbs;
  o.G = a.coded_bits;
  o.rate = a.rate;
  const std::string mod = a.modulation.empty() ? "qpsk" : a.modulation;
  if (mod == "bpsk") throw UsageError("--tbs: --modulation is qpsk, 16qam or 64qam");
  o.Q_m = mod == "qpsk" ? 2 : (mod == "16qam" ? 4 : 6);
  o.fading = a.channel == "rayleigh" ? turbo::Fading::rayleigh : turbo::Fading::none;
  o.max_transmissions = a.max_tx;
  o.llr = parse_llr(a.llr);
  o.frac_bits = a.frac_bits;
  o.decoder = decoder_options(a);
  o.seed = a.seed;
  o.blocks = a.frames;
  // The options are checked before the first point runs (one block, the lowest SNR).
  as_usage([&] {
    turbo::TransportSimOptions probe = o;
    probe.blocks = 1;
    return turbo::simulate_transport(probe, a.snr_from);
  });
  const auto plan = turbo::plan_segmentation(o.A);
  std::printf(
      "turbo sim: TBS %d (%d code block(s), K = %d..%d), %s, %s, G = %s, up to %d "
      "transmissions (rv 0, 2, 3, 1), %s, %d iterations%s, %s LLRs, backend %s (%s)\n",
      o.A, plan.C, plan.K.front(), plan.K.back(), mod.c_str(), a.channel.c_str(),
      a.coded_bits ? std::to_string(a.coded_bits).c_str()
                   : ("rate " + std::to_string(a.rate)).c_str(),
      o.max_transmissions, a.algorithm.c_str(), a.iterations,
      a.early_termination ? " (early termination)" : "", a.llr.c_str(),
      std::string(to_string(resolve(o.decoder.backend))).c_str(), a.backend.c_str());
  print_cpu_decoder(o.llr, o.decoder);
  std::printf("%8s %8s", "SNR dB", "blocks");
  for (int t = 0; t < o.max_transmissions; ++t) std::printf("   BLER tx%-2d", t + 1);
  std::printf(" %8s %7s %10s\n", "thr %", "avg it", "Mbps");
  const int points = static_cast<int>(std::floor((a.snr_to - a.snr_from) / a.snr_step + 1e-9));
  for (int i = 0; i <= points; ++i) {
    const double snr = a.snr_from + i * a.snr_step;
    const auto p = turbo::simulate_transport(o, snr);
    std::printf("%8.2f %8llu", snr, static_cast<unsigned long long>(p.blocks));
    for (int t = 0; t < o.max_transmissions; ++t) std::printf(" %11.3e", p.bler(t));
    // Throughput: transport block bits delivered over those the transmissions could carry.
    const double thr = 100.0 * double(p.delivered_bits) / (double(p.transmissions) * double(o.A));
    const double decoded = double(p.transmissions) * double(o.A);
    std::printf(" %8.2f %7.2f %10.2f\n", thr,
                p.code_blocks ? double(p.iterations) / double(p.code_blocks) : 0.0,
                p.seconds > 0 ? decoded / p.seconds / 1e6 : 0.0);
    std::fflush(stdout);
  }
  return kExitOk;
}

int run_sim(const SimArgs& a) {
  if (a.tb_mode) return run_tb_sim(a);
  check_range("ebn0", a.ebn0_from, a.ebn0_to, a.ebn0_step);
  if (a.frames == 0) throw UsageError("-n/--frames must be at least 1");
  if (a.modulation == "16qam" || a.modulation == "64qam")
    throw UsageError("--modulation " + a.modulation + " needs --tbs (code blocks: bpsk or qpsk)");
  as_usage([&] {
    turbo::check_block_size(a.K);
    return 0;
  });
  // The library clamps P to each block's K (a batch of several sizes shares one P); for the one
  // K of a sim a larger P is a mistake to name, not to run silently as P = K.
  if (a.P > a.K)
    throw UsageError("-P/--subdecoders " + std::to_string(a.P) + " is more than K = " +
                     std::to_string(a.K) + " (each sub-decoder needs at least one bit)");
  turbo::SimOptions o;
  o.K = a.K;
  o.modulation = a.modulation == "qpsk" ? turbo::Modulation::qpsk : turbo::Modulation::bpsk;
  o.llr = parse_llr(a.llr);
  o.frac_bits = a.frac_bits;
  o.decoder = decoder_options(a);
  o.seed = a.seed;
  o.first_frame = a.first_frame;
  o.max_frames = a.frames;
  o.target_frame_errors = a.target_errors;
  o.batch = a.batch;
  as_usage([&] {  // the options, checked on one frame before the first point runs
    turbo::SimOptions probe = o;
    probe.max_frames = probe.batch = 1;
    return turbo::simulate(probe, a.ebn0_from);
  });
  std::printf(
      "turbo sim: K = %d, %s, %d iterations, P = %d, scaling %.2f, %s LLRs, %s, %s, backend %s "
      "(%s)\n",
      a.K, a.algorithm.c_str(), a.iterations, a.P, o.decoder.scaling, a.llr.c_str(),
      a.modulation.empty() ? "bpsk" : a.modulation.c_str(), a.sync.c_str(),
      std::string(to_string(resolve(o.decoder.backend))).c_str(), a.backend.c_str());
  print_cpu_decoder(o.llr, o.decoder);
  std::printf("%8s %10s %10s %10s %12s %10s %7s %10s\n", "Eb/N0 dB", "frames", "frame err", "FER",
              "bit err", "BER", "avg it", "Mbps");
  const int points = static_cast<int>(std::floor((a.ebn0_to - a.ebn0_from) / a.ebn0_step + 1e-9));
  for (int i = 0; i <= points; ++i) {
    const double e = a.ebn0_from + i * a.ebn0_step;
    const auto p = turbo::simulate(o, e);
    std::printf("%8.3f %10llu %10llu %10.3e %12llu %10.3e %7.2f %10.2f\n", e,
                static_cast<unsigned long long>(p.frames),
                static_cast<unsigned long long>(p.frame_errors), p.fer(),
                static_cast<unsigned long long>(p.bit_errors), p.ber(),
                p.frames ? double(p.iterations) / double(p.frames) : 0.0, p.mbps());
    std::fflush(stdout);
  }
  return kExitOk;
}

struct BenchArgs {
  std::vector<int> batches{1, 8, 96, 1536};
  std::string configs = "64,768";
  int iterations = 6;
  int reps = 10;
  double ebn0 = 1.0;
  std::string int8_metrics = "auto";
  bool no_cpu = false, no_gpu = false, early_termination = false, no_fer_check = false;
  bool cpu_fer_check = false;
};

int run_bench(const BenchArgs& a) {
  turbo::BenchOptions o;
  o.batches = a.batches;
  o.configs = as_usage([&] { return turbo::parse_bench_configs(a.configs, a.iterations); });
  o.iterations = a.iterations;
  o.reps = a.reps;
  o.ebn0_db = a.ebn0;
  o.early_termination = a.early_termination;
  o.fer_check = !a.no_fer_check;
  o.cpu_fer_check = a.cpu_fer_check;
  o.int8_metrics = parse_int8_metrics(a.int8_metrics);
  o.cpu = !a.no_cpu;
  o.gpu = !a.no_gpu && !cuda_devices().empty();
  if (!o.gpu && !o.cpu) throw UsageError("nothing to measure: no GPU in use and --no-cpu given");
  as_usage([&] {
    turbo::check_bench_options(o);
    return 0;
  });
  turbo::benchmark_report(o, [](std::string_view line) {
    std::fwrite(line.data(), 1, line.size(), stdout);
    std::fflush(stdout);
  });
  return kExitOk;
}

// Counts are unsigned, and CLI11 would take "-3" as 2^64 - 3 (a run that never ends).
const CLI::Validator kNotNegative(
    [](std::string& v) {
      return v.find('-') == std::string::npos ? std::string() : "must not be negative: " + v;
    },
    "COUNT");

void add_turbo_commands(CLI::App& app, Action& action) {
  auto* turbo =
      app.add_subcommand("turbo", "LTE turbo coding (36.212): simulation and decoder benchmark");
  turbo->require_subcommand(1);

  auto sim = std::make_shared<SimArgs>();
  auto* cs = turbo->add_subcommand(
      "sim", "BER/FER of code blocks over AWGN, or with --tbs BLER of transport blocks with HARQ");
  cs->add_option("-K,--block-size", sim->K, "Code block size (one of the 188 of 36.212)")
      ->capture_default_str();
  cs->add_option("-i,--iterations", sim->iterations, "Decoder iterations")->capture_default_str();
  cs->add_option("--algorithm", sim->algorithm, "max-log or log-map")
      ->check(CLI::IsMember({"max-log", "log-map"}))
      ->capture_default_str();
  cs->add_option("-P,--subdecoders", sim->P, "Sub-decoders per block")->capture_default_str();
  cs->add_option("--scaling", sim->scaling, "Extrinsic scaling (max-log)")->capture_default_str();
  cs->add_option("--llr", sim->llr, "float, int16 or int8")
      ->check(CLI::IsMember({"float", "int16", "int8"}))
      ->capture_default_str();
  cs->add_option("--int8-metrics", sim->int8_metrics,
                 "int8 LLRs on the CPU: auto, exact or saturating (8-bit lanes; P = 1, max-log)")
      ->check(CLI::IsMember({"auto", "exact", "saturating"}))
      ->capture_default_str();
  cs->add_option("--frac-bits", sim->frac_bits,
                 "Fractional bits of fixed-point LLRs (default 6 int16, 2 int8)");
  cs->add_option("--backend", sim->backend, "cpu, cpu-parallel, cuda or auto")
      ->capture_default_str();
  cs->add_option("--modulation", sim->modulation,
                 "bpsk or qpsk (default bpsk); with --tbs qpsk, 16qam or 64qam (default qpsk)")
      ->check(CLI::IsMember({"bpsk", "qpsk", "16qam", "64qam"}));
  cs->add_option("--sync", sim->sync, "strict or loose (GPU)")
      ->check(CLI::IsMember({"strict", "loose"}))
      ->capture_default_str();
  cs->add_option("--ebn0-from", sim->ebn0_from, "First Eb/N0 (dB)")->capture_default_str();
  cs->add_option("--ebn0-to", sim->ebn0_to, "Last Eb/N0 (dB)")->capture_default_str();
  cs->add_option("--ebn0-step", sim->ebn0_step, "Eb/N0 step (dB)")->capture_default_str();
  cs->add_option("-n,--frames", sim->frames,
                 "Frames per point (maximum); with --tbs, transport blocks per point")
      ->check(kNotNegative)
      ->capture_default_str();
  cs->add_option("--target-errors", sim->target_errors, "Stop a point after this many frame errors")
      ->check(kNotNegative)
      ->capture_default_str();
  cs->add_option("--seed", sim->seed, "Seed of data and noise")
      ->check(kNotNegative)
      ->capture_default_str();
  cs->add_option("--first-frame", sim->first_frame,
                 "First frame number (continue a point: frames are the same on every backend)")
      ->check(kNotNegative)
      ->capture_default_str();
  cs->add_option("--batch", sim->batch, "Frames per decoder call")->capture_default_str();
  cs->add_flag("--early-termination", sim->early_termination,
               "Stop a code block once its CRC passes (strict sync): frames carry CRC24B; "
               "transport blocks CRC24B, or CRC24A for one code block");
  cs->add_option("--min-iterations", sim->min_iterations,
                 "Early termination: iterations before the first CRC check")
      ->capture_default_str();
  auto* tbs = cs->add_option("--tbs", sim->tbs,
                             "Simulate transport blocks of this size (TBS, bits) with rate "
                             "matching and HARQ, over SNR");
  const auto tb_only = [&](CLI::Option* opt) { opt->needs(tbs); };
  tb_only(cs->add_option("-G,--coded-bits", sim->coded_bits,
                         "--tbs: coded bits per transmission (default: from --rate)"));
  tb_only(cs->add_option("--rate", sim->rate, "--tbs: code rate when -G is not given")
              ->capture_default_str());
  tb_only(cs->add_option("--max-tx", sim->max_tx,
                         "--tbs: transmissions per block at most (HARQ, rv 0, 2, 3, 1)")
              ->capture_default_str());
  tb_only(cs->add_option("--channel", sim->channel, "--tbs: awgn or rayleigh (flat, per symbol)")
              ->check(CLI::IsMember({"awgn", "rayleigh"}))
              ->capture_default_str());
  tb_only(cs->add_option("--snr-from", sim->snr_from, "--tbs: first Es/N0 (dB)")
              ->capture_default_str());
  tb_only(cs->add_option("--snr-to", sim->snr_to, "--tbs: last Es/N0 (dB)")->capture_default_str());
  tb_only(
      cs->add_option("--snr-step", sim->snr_step, "--tbs: Es/N0 step (dB)")->capture_default_str());
  for (const char* name : {"--block-size", "--ebn0-from", "--ebn0-to", "--ebn0-step",
                           "--target-errors", "--first-frame", "--batch"})
    tbs->excludes(cs->get_option(name));
  cs->callback([&action, sim, tbs] {
    sim->tb_mode = tbs->count() > 0;
    action = [sim] { return run_sim(*sim); };
  });

  auto bench = std::make_shared<BenchArgs>();
  auto* cb = turbo->add_subcommand("bench", "Decoder throughput, K = 6144, GPU and CPU parallel");
  cb->add_option("--batches", bench->batches, "Blocks per launch")
      ->delimiter(',')
      ->capture_default_str();
  cb->add_option("-P,--p,--subdecoders", bench->configs,
                 "GPU configurations: P or P:iterations, comma-separated (e.g. 64,128:8,768:16; "
                 "iterations default to -i)")
      ->capture_default_str();
  cb->add_option("-i,--iterations", bench->iterations,
                 "Decoder iterations (the CPU's, the FER reference's and the default of -P)")
      ->capture_default_str();
  cb->add_option("--reps", bench->reps, "Repetitions per point")->capture_default_str();
  cb->add_option("--ebn0", bench->ebn0, "Eb/N0 of the timed frames (dB)")->capture_default_str();
  cb->add_flag("--early-termination", bench->early_termination,
               "Frames carry CRC24B; blocks stop once it passes (rows show the mean iterations)");
  cb->add_flag("--no-fer-check", bench->no_fer_check,
               "Skip the FER check of each configuration against the serial decoder");
  cb->add_flag("--cpu-fer-check", bench->cpu_fer_check,
               "Without a GPU: check the CPU decoder's FER too (the reference on the CPU)");
  cb->add_option("--int8-metrics", bench->int8_metrics,
                 "The CPU's int8 metrics: auto, exact or saturating (8-bit lanes)")
      ->check(CLI::IsMember({"auto", "exact", "saturating"}))
      ->capture_default_str();
  cb->add_flag("--no-cpu", bench->no_cpu, "Skip the CPU decoder");
  cb->add_flag("--no-gpu", bench->no_gpu, "Skip the GPU decoder");
  cb->callback([&action, bench] { action = [bench] { return run_bench(*bench); }; });
}

const CommandRegistration registration{30, add_turbo_commands};
}  // namespace

}  // namespace sigpu::cli
