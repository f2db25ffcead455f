// The turbo benchmark behind `sigpu turbo bench` and bench/turbo_bench.cpp: the timed points and
// the FER check that says whether a configuration decodes at full quality.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/frames.hpp"

namespace sigpu::turbo {

std::string_view to_string(LlrType t) {
  switch (t) {
    case LlrType::f32:
      return "float";
    case LlrType::i16:
      return "int16";
    case LlrType::i8:
      return "int8";
  }
  return "?";
}

namespace {

// A small batch decodes other frames in each repetition, from a pool of at least this many, so
// that its latency is a distribution over frames (with early termination, iterations vary).
constexpr int kMinPool = 96;
constexpr std::uint64_t kSeed = 7;  // of the timed frames (the FER check has its own frames)
// The FER check's search: the serial reference from kReferenceFrom, every configuration from
// just below the reference's crossing, in kCheckStep steps; kCheckBatch frames per launch.
constexpr double kReferenceFrom = 0.6, kCheckStep = 0.05;
constexpr int kCheckBatch = 1536;
constexpr double kNone = std::numeric_limits<double>::quiet_NaN();  // a crossing not found

// The frames of one batch size: a multiple of the batch, so that repetition r decodes frames
// first(r) .. first(r) + blocks - 1 without wrapping around.
struct FramePool {
  int K = 0, blocks = 0, count = 0;
  std::vector<int> sizes;  // `blocks` entries of K
  std::vector<std::uint8_t> info;
  std::vector<float> llr;
  std::vector<std::int16_t> q16;
  std::vector<std::int8_t> q8;
  int first(int rep) const { return rep % (count / blocks) * blocks; }
};

FramePool make_pool(const BenchOptions& o, int blocks) {
  FramePool p;
  p.K = o.K;
  p.blocks = blocks;
  p.count = blocks >= kMinPool ? blocks : (kMinPool + blocks - 1) / blocks * blocks;
  p.sizes.assign(blocks, o.K);
  const std::size_t n = llr_count(o.K);
  p.info.resize(std::size_t(p.count) * o.K);
  p.llr.resize(std::size_t(p.count) * n);
  const ChannelOptions ch{.ebn0_db = o.ebn0_db, .seed = kSeed};
  ThreadPool::shared().parallel_for(
      p.count,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t f = begin; f < end; ++f) {
          const std::span<std::uint8_t> bits(p.info.data() + f * o.K, o.K);
          random_frame(kSeed, f, o.early_termination, bits);
          awgn_llrs(encode(bits), ch, f, std::span<float>(p.llr.data() + f * n, n));
        }
      },
      1);
  p.q16.resize(p.llr.size());
  p.q8.resize(p.llr.size());
  quantize(p.llr, 6, std::span<std::int16_t>(p.q16));
  quantize(p.llr, 2, std::span<std::int8_t>(p.q8));
  return p;
}

// Calls f(K, llr) with `count` frames of the pool from `first`, as LLRs of type t.
template <typename F>
auto with_llrs(const FramePool& p, LlrType t, int first, int count, F&& f) {
  const std::size_t n = llr_count(p.K), at = std::size_t(first) * n, len = std::size_t(count) * n;
  const auto K = std::span<const int>(p.sizes).first(count);
  switch (t) {
    case LlrType::i16:
      return f(K, std::span<const std::int16_t>(p.q16).subspan(at, len));
    case LlrType::i8:
      return f(K, std::span<const std::int8_t>(p.q8).subspan(at, len));
    case LlrType::f32:
      break;
  }
  return f(K, std::span<const float>(p.llr).subspan(at, len));
}

DecoderOptions decoder_options(const BenchOptions& o, const BenchConfig& c, Backend backend) {
  return {.backend = backend,
          .algorithm = o.algorithm,
          .iterations = c.iterations,
          .subdecoders = c.P,
          .early_termination = o.early_termination,
          .min_iterations = 1,
          .crc = BlockCrc::crc24b,
          .int8_metrics = backend == Backend::cuda ? Int8Metrics::automatic : o.int8_metrics};
}

// The GPU decoder of one LLR type, and which frames it holds.
struct Device {
  CudaDecoder dec{0};
  LlrType type;
  int loaded = -1;
  /// One timed run; the bits come back from the device only when asked for.
  DecodeResult run(const FramePool& p, int first, const DecoderOptions& d, bool bits) {
    if (first != loaded)
      with_llrs(p, type, first, p.blocks, [&](auto K, auto llr) { dec.load(K, llr); });
    loaded = first;
    DecodeResult r;
    r.seconds = dec.run(d);
    if (bits) r.bits = dec.bits();
    r.iterations = dec.iterations();
    return r;
  }
};

struct Timed {
  std::vector<double> seconds;
  double iterations = 0;  // mean per block
  int first = 0;          // of the last repetition, whose bits these are
  std::vector<std::uint8_t> bits;
};

// reps runs of run_rep(first frame, whether its bits are wanted: the last run's), after one
// untimed run when warm_up (allocations, module load).
template <typename F>
Timed repeat(const FramePool& p, int reps, bool warm_up, F&& run_rep) {
  if (warm_up) run_rep(p.first(0), false);
  Timed t;
  std::uint64_t iterations = 0;
  for (int r = 0; r < reps; ++r) {
    t.first = p.first(r);
    DecodeResult res = run_rep(t.first, r == reps - 1);
    t.seconds.push_back(res.seconds);
    for (int i : res.iterations) iterations += i;
    if (r == reps - 1) t.bits = std::move(res.bits);
  }
  t.iterations = double(iterations) / (double(reps) * p.blocks);
  return t;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double ber(const FramePool& p, const Timed& t) {
  const std::size_t at = std::size_t(t.first) * p.K;
  std::size_t e = 0;
  for (std::size_t i = 0; i < t.bits.size(); ++i) e += t.bits[i] != p.info[at + i];
  return t.bits.empty() ? 0.0 : double(e) / double(t.bits.size());
}

Timed time_cpu(const BenchOptions& o, const FramePool& p, LlrType type) {
  const DecoderOptions d = decoder_options(o, {1, o.iterations}, Backend::cpu_parallel);
  return repeat(p, std::max(1, o.reps / 5), false, [&](int first, bool) {
    return with_llrs(p, type, first, p.blocks, [&](auto K, auto llr) { return decode(K, llr, d); });
  });
}

// The GPU's strict bits against the CPU parallel decoder's at the same P (up to kMinPool blocks
// of the last repetition).
bool matches_cpu(const BenchOptions& o, const FramePool& p, const BenchRow& row,
                 const Timed& strict) {
  DecoderOptions d = decoder_options(o, row.config, Backend::cpu_parallel);
  d.int8_metrics = Int8Metrics::exact;  // the GPU's
  const auto ref = with_llrs(p, row.type, strict.first, std::min(p.blocks, kMinPool),
                             [&](auto K, auto llr) { return decode(K, llr, d); });
  return std::equal(ref.bits.begin(), ref.bits.end(), strict.bits.begin());
}

void time_gpu(const BenchOptions& o, const FramePool& p, Device& g, BenchRow& row) {
  DecoderOptions d = decoder_options(o, row.config, Backend::cuda);
  const auto run = [&](int first, bool bits) { return g.run(p, first, d, bits); };
  const Timed strict = repeat(p, o.reps, true, run);
  row.strict_min = *std::min_element(strict.seconds.begin(), strict.seconds.end());
  row.strict_max = *std::max_element(strict.seconds.begin(), strict.seconds.end());
  row.strict_median = median(strict.seconds);
  row.strict_iterations = strict.iterations;
  row.strict_kernel = g.dec.kernel();
  row.ber_strict = ber(p, strict);
  d.sync = Sync::loose;
  d.early_termination = false;  // strict mode only
  const Timed loose = repeat(p, o.reps, true, run);
  row.loose_median = median(loose.seconds);
  row.ber_loose = ber(p, loose);
  if (o.cpu) row.strict_matches_cpu_p = matches_cpu(o, p, row, strict);
}

// ---- FER check ----------------------------------------------------------------------------

SimOptions check_options(const BenchOptions& o, LlrType type, const DecoderOptions& d) {
  SimOptions s;
  s.K = o.K;
  s.llr = type;
  s.decoder = d;
  s.max_frames = o.fer_max_frames;
  s.target_frame_errors = o.fer_min_errors;
  s.batch = kCheckBatch;
  return s;
}

BenchCheck reference_check(const BenchOptions& o) {
  BenchCheck c;
  c.reference = true;
  c.config = {1, o.iterations};
  const DecoderOptions d{.backend = o.gpu ? Backend::cuda : Backend::cpu_parallel,
                         .algorithm = Algorithm::max_log_map,
                         .iterations = o.iterations,
                         .subdecoders = 1};
  c.crossing =
      fer_crossing(check_options(o, LlrType::f32, d), o.fer_target, kReferenceFrom, kCheckStep);
  c.full_quality = c.crossing.found;
  return c;
}

// A GPU configuration's check, or with cpu the CPU decoder's (config P = 1, o.iterations).
BenchCheck config_check(const BenchOptions& o, const BenchCheck& ref, LlrType type,
                        const BenchConfig& config, bool cpu) {
  BenchCheck c;
  c.cpu = cpu;
  c.type = type;
  c.config = config;
  c.early_termination = o.early_termination;
  const double from = ref.crossing.found ? ref.crossing.ebn0_db - kCheckStep : kReferenceFrom;
  const Backend backend = cpu ? Backend::cpu_parallel : Backend::cuda;
  c.crossing = fer_crossing(check_options(o, type, decoder_options(o, config, backend)),
                            o.fer_target, from, kCheckStep);
  const bool both = ref.crossing.found && c.crossing.found;
  c.delta_db = both ? c.crossing.ebn0_db - ref.crossing.ebn0_db : kNone;
  c.full_quality = both && c.delta_db <= o.fer_margin_db;
  return c;
}

bool same_config(const BenchCheck& c, LlrType type, const BenchConfig& config) {
  return !c.cpu && c.type == type && c.config.P == config.P &&
         c.config.iterations == config.iterations;
}

// The reference, then each distinct (type, config) on the GPU, then the CPU decoder of each
// type, each reported as it finishes.
std::vector<BenchCheck> run_checks(const BenchOptions& o,
                                   const std::function<void(const BenchCheck&)>& on_check) {
  std::vector<BenchCheck> checks{reference_check(o)};
  if (on_check) on_check(checks.front());
  for (LlrType t : o.gpu ? o.types : std::vector<LlrType>{})
    for (const BenchConfig& c : o.configs) {
      const bool seen = std::any_of(checks.begin() + 1, checks.end(),
                                    [&](const BenchCheck& k) { return same_config(k, t, c); });
      if (seen) continue;
      checks.push_back(config_check(o, checks.front(), t, c, false));
      if (on_check) on_check(checks.back());
    }
  for (LlrType t : o.cpu ? o.types : std::vector<LlrType>{}) {
    if (t == LlrType::f32 && o.algorithm == Algorithm::max_log_map && !o.early_termination) {
      // The reference's own decoder and frames, bit for bit on every backend: its crossing.
      BenchCheck same = checks.front();
      same.reference = false;
      same.cpu = true;
      same.delta_db = same.crossing.found ? 0.0 : kNone;
      checks.push_back(same);
    } else {
      checks.push_back(config_check(o, checks.front(), t, {1, o.iterations}, true));
    }
    if (on_check) on_check(checks.back());
  }
  return checks;
}

void apply_check(const std::vector<BenchCheck>& checks, BenchRow& row) {
  for (auto it = checks.begin() + 1; it != checks.end(); ++it) {
    if (it->cpu && it->type == row.type) {
      row.cpu_fer_checked = true;
      row.cpu_fer_delta_db = it->delta_db;
      row.cpu_full_quality = it->full_quality;
    }
    if (!same_config(*it, row.type, row.config)) continue;
    row.fer_checked = true;
    row.fer_ebn0_db = it->crossing.found ? it->crossing.ebn0_db : kNone;
    row.fer_delta_db = it->delta_db;
    row.full_quality = it->full_quality;
  }
}

}  // namespace

void check_bench_options(const BenchOptions& o) {
  check_block_size(o.K);
  if (o.reps < 1) throw Error("turbo bench: " + std::to_string(o.reps) + " repetitions");
  if (o.iterations < 1) throw Error("turbo bench: " + std::to_string(o.iterations) + " iterations");
  if (!std::isfinite(o.ebn0_db)) throw Error("turbo bench: Eb/N0 " + std::to_string(o.ebn0_db));
  for (int blocks : o.batches)
    if (blocks < 1) throw Error("turbo bench: batch of " + std::to_string(blocks) + " blocks");
  for (const BenchConfig& c : o.configs)
    if (c.P < 1 || c.iterations < 1)
      throw Error("turbo bench: P = " + std::to_string(c.P) + " with " +
                  std::to_string(c.iterations) + " iterations");
  for (LlrType t : o.types)
    if (o.algorithm == Algorithm::log_map && t != LlrType::f32)
      throw Error("turbo bench: log-map needs float LLRs (not " + std::string(to_string(t)) + ")");
  if (!(o.fer_target > 0 && o.fer_target < 1))
    throw Error("turbo bench: FER target " + std::to_string(o.fer_target) + " is not in (0, 1)");
  if (!(o.fer_margin_db >= 0) || !std::isfinite(o.fer_margin_db))
    throw Error("turbo bench: FER margin " + std::to_string(o.fer_margin_db) + " dB");
  if (o.fer_max_frames < 1 || o.fer_min_errors < 1)
    throw Error("turbo bench: FER points of " + std::to_string(o.fer_max_frames) + " frames and " +
                std::to_string(o.fer_min_errors) + " frame errors");
  if (o.gpu && cuda_devices().empty())
    throw Error("turbo bench: no CUDA device (use --no-gpu for the CPU only)");
}

std::vector<BenchRow> benchmark(const BenchOptions& o,
                                const std::function<void(const BenchRow&)>& on_row,
                                const std::function<void(const BenchCheck&)>& on_check) {
  check_bench_options(o);
  const std::vector<BenchCheck> checks = o.fer_check && (o.gpu || o.cpu_fer_check)
                                             ? run_checks(o, on_check)
                                             : std::vector<BenchCheck>{};
  const std::vector<BenchConfig> configs =
      o.gpu ? o.configs : std::vector<BenchConfig>{{1, o.iterations}};
  std::vector<BenchRow> rows;
  for (int blocks : o.batches) {
    const FramePool pool = make_pool(o, blocks);
    for (LlrType t : o.types) {
      const Timed cpu = o.cpu ? time_cpu(o, pool, t) : Timed{};
      std::optional<Device> gpu;
      if (o.gpu) gpu.emplace(Device{.type = t});
      for (const BenchConfig& config : configs) {
        BenchRow row{.type = t, .blocks = blocks, .config = config};
        if (o.cpu) {
          row.cpu_median = median(cpu.seconds);
          row.cpu_iterations = cpu.iterations;
          row.ber_cpu = ber(pool, cpu);
        }
        if (gpu) time_gpu(o, pool, *gpu, row);
        if (!checks.empty()) apply_check(checks, row);
        rows.push_back(row);
        if (on_row) on_row(row);
      }
    }
  }
  return rows;
}

}  // namespace sigpu::turbo
