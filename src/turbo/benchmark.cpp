// The turbo benchmark behind `sigpu turbo bench` and bench/turbo_bench.cpp.
#include <algorithm>
#include <memory>
#include <random>
#include <string>

#include <sigpu/turbo.hpp>

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

struct Batch {
  std::vector<int> K;
  std::vector<std::uint8_t> info;
  std::vector<float> llr;
  std::vector<std::int16_t> q16;
  std::vector<std::int8_t> q8;
};

// Up to 96 distinct frames, repeated to fill the batch (the decoder does the same work).
Batch make_batch(int K, int blocks, double ebn0_db) {
  Batch b;
  b.K.assign(blocks, K);
  const int distinct = std::min(blocks, 96);
  const std::size_t n = llr_count(K);
  std::vector<std::uint8_t> info(std::size_t(distinct) * K);
  std::vector<float> llr(std::size_t(distinct) * n);
  for (int f = 0; f < distinct; ++f) {
    std::mt19937_64 rng(1000 + f);
    std::uint8_t* c = info.data() + std::size_t(f) * K;
    for (int k = 0; k < K; ++k) c[k] = static_cast<std::uint8_t>(rng() & 1u);
    awgn_llrs(encode(std::span<const std::uint8_t>(c, K)), {.ebn0_db = ebn0_db, .seed = 7}, f,
              std::span<float>(llr.data() + std::size_t(f) * n, n));
  }
  for (int f = 0; f < blocks; ++f) {
    const int src = f % distinct;
    b.info.insert(b.info.end(), info.begin() + std::size_t(src) * K,
                  info.begin() + std::size_t(src + 1) * K);
    b.llr.insert(b.llr.end(), llr.begin() + std::size_t(src) * n,
                 llr.begin() + std::size_t(src + 1) * n);
  }
  b.q16.resize(b.llr.size());
  b.q8.resize(b.llr.size());
  quantize(b.llr, 6, std::span<std::int16_t>(b.q16));
  quantize(b.llr, 2, std::span<std::int8_t>(b.q8));
  return b;
}

double ber(const std::vector<std::uint8_t>& bits, const std::vector<std::uint8_t>& info) {
  std::size_t e = 0;
  for (std::size_t i = 0; i < bits.size() && i < info.size(); ++i) e += bits[i] != info[i];
  return info.empty() ? 0.0 : double(e) / double(info.size());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

DecodeResult decode_type(const Batch& b, LlrType t, const DecoderOptions& o) {
  switch (t) {
    case LlrType::f32:
      return decode(b.K, std::span<const float>(b.llr), o);
    case LlrType::i16:
      return decode(b.K, std::span<const std::int16_t>(b.q16), o);
    case LlrType::i8:
      return decode(b.K, std::span<const std::int8_t>(b.q8), o);
  }
  return {};
}

}  // namespace

std::vector<BenchRow> benchmark(const BenchOptions& o,
                                const std::function<void(const BenchRow&)>& on_row) {
  check_block_size(o.K);
  if (o.reps < 1) throw Error("turbo bench: " + std::to_string(o.reps) + " repetitions");
  for (LlrType t : o.types)
    if (o.algorithm == Algorithm::log_map && t != LlrType::f32)
      throw Error("turbo bench: log-map needs float LLRs (not " + std::string(to_string(t)) + ")");
  if (o.gpu && cuda_devices().empty())
    throw Error("turbo bench: no CUDA device (use --no-gpu for the CPU only)");
  std::vector<BenchRow> rows;
  for (int blocks : o.batches) {
    if (blocks < 1) throw Error("turbo bench: batch of " + std::to_string(blocks) + " blocks");
    const Batch b = make_batch(o.K, blocks, o.ebn0_db);
    for (LlrType t : o.types) {
      double cpu_median = 0, ber_cpu = 0;
      if (o.cpu) {
        std::vector<double> times;
        const DecoderOptions c{.backend = Backend::cpu_parallel,
                               .algorithm = o.algorithm,
                               .iterations = o.iterations,
                               .subdecoders = 1};
        for (int r = 0; r < std::max(1, o.reps / 5); ++r) {
          const auto res = decode_type(b, t, c);
          times.push_back(res.seconds);
          ber_cpu = ber(res.bits, b.info);
        }
        cpu_median = median(times);
      }
      std::unique_ptr<CudaDecoder> gpu;
      if (o.gpu) {
        gpu = std::make_unique<CudaDecoder>(0);
        switch (t) {
          case LlrType::f32:
            gpu->load(b.K, std::span<const float>(b.llr));
            break;
          case LlrType::i16:
            gpu->load(b.K, std::span<const std::int16_t>(b.q16));
            break;
          case LlrType::i8:
            gpu->load(b.K, std::span<const std::int8_t>(b.q8));
            break;
        }
      }
      for (int P : o.subdecoders) {
        BenchRow row;
        row.type = t;
        row.blocks = blocks;
        row.P = P;
        row.cpu_median = cpu_median;
        row.ber_cpu = ber_cpu;
        if (gpu) {
          DecoderOptions g{.backend = Backend::cuda,
                           .algorithm = o.algorithm,
                           .iterations = o.iterations,
                           .subdecoders = P};
          gpu->run(g);  // warm-up (allocations, module load)
          std::vector<double> times;
          for (int r = 0; r < o.reps; ++r) times.push_back(gpu->run(g));
          const auto strict_bits = gpu->bits();
          row.ber_strict = ber(strict_bits, b.info);
          row.strict_min = *std::min_element(times.begin(), times.end());
          row.strict_max = *std::max_element(times.begin(), times.end());
          row.strict_median = median(times);
          row.strict_kernel = gpu->kernel();
          g.sync = Sync::loose;
          gpu->run(g);
          times.clear();
          for (int r = 0; r < o.reps; ++r) times.push_back(gpu->run(g));
          row.loose_median = median(times);
          row.ber_loose = ber(gpu->bits(), b.info);
          // Check the device result against the CPU parallel scheme at the same P (up to 96
          // blocks: the batch repeats its first 96 frames).
          if (o.cpu) {
            const int check = std::min(blocks, 96);
            Batch head;
            head.K.assign(check, o.K);
            const std::size_t n = llr_count(o.K) * check;
            head.llr.assign(b.llr.begin(), b.llr.begin() + n);
            head.q16.assign(b.q16.begin(), b.q16.begin() + n);
            head.q8.assign(b.q8.begin(), b.q8.begin() + n);
            const DecoderOptions c{.backend = Backend::cpu_parallel,
                                   .algorithm = o.algorithm,
                                   .iterations = o.iterations,
                                   .subdecoders = P};
            const auto ref = decode_type(head, t, c);
            row.strict_matches_cpu_p =
                std::equal(ref.bits.begin(), ref.bits.end(), strict_bits.begin());
          }
        }
        rows.push_back(row);
        if (on_row) on_row(row);
      }
    }
  }
  return rows;
}

}  // namespace sigpu::turbo
