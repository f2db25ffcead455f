// Monte-Carlo BER/FER simulation over the whole chain.
#include <algorithm>
#include <memory>
#include <random>
#include <string>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"

namespace sigpu::turbo {
namespace {

template <typename T>
DecodeResult decode_as(std::span<const int> K, const std::vector<float>& llr, int frac_bits,
                       const DecoderOptions& d) {
  std::vector<T> q(llr.size());
  quantize(llr, frac_bits, std::span<T>(q));
  return decode(K, std::span<const T>(q), d);
}

}  // namespace

SimPoint simulate(const SimOptions& o, double ebn0_db) {
  check_block_size(o.K);
  if (o.max_frames == 0) throw Error("turbo: simulate with zero frames");
  if (o.batch < 1)
    throw Error("turbo: simulation batch " + std::to_string(o.batch) + " must be at least 1");
  const int frac = o.frac_bits >= 0 ? o.frac_bits : (o.llr == LlrType::i8 ? 2 : 6);
  const ChannelOptions ch{.modulation = o.modulation, .ebn0_db = ebn0_db, .seed = o.seed};
  SimPoint pt;
  pt.ebn0_db = ebn0_db;
  const std::size_t n = llr_count(o.K);
  // Early termination needs blocks that carry CRC24B: their last 24 bits.
  const bool with_crc = o.decoder.early_termination;
  const int data_bits = with_crc ? o.K - 24 : o.K;
  // With the cuda backend the channel runs on the GPU too (the same LLRs: channel.hpp), so only
  // the codewords go to the device.
  std::unique_ptr<CudaDecoder> gpu;
  if (resolve(o.decoder.backend) == Backend::cuda)
    gpu = std::make_unique<CudaDecoder>(o.decoder.device);
  std::uint64_t frame = 0;
  while (frame < o.max_frames &&
         (o.target_frame_errors == 0 || pt.frame_errors < o.target_frame_errors)) {
    const int count = static_cast<int>(std::min<std::uint64_t>(o.batch, o.max_frames - frame));
    const std::uint64_t id0 = o.first_frame + frame;  // number of the batch's first frame
    std::vector<int> K(count, o.K);
    std::vector<std::uint8_t> info(std::size_t(count) * o.K);
    std::vector<float> llr(gpu ? 0 : std::size_t(count) * n);
    std::vector<std::uint8_t> code(gpu ? std::size_t(count) * n : 0);
    // Frames are independent (bits seeded per frame, noise keyed by frame): made on all cores.
    ThreadPool::shared().parallel_for(
        count,
        [&](std::size_t begin, std::size_t end) {
          for (std::size_t f = begin; f < end; ++f) {
            std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + id0 + f);
            std::uint8_t* c = info.data() + f * o.K;
            for (int k = 0; k < data_bits; ++k) c[k] = static_cast<std::uint8_t>(rng() & 1u);
            if (with_crc) {
              const std::uint32_t crc = crc24b(std::span<const std::uint8_t>(c, data_bits));
              for (int i = 0; i < 24; ++i) c[data_bits + i] = (crc >> (23 - i)) & 1u;
            }
            const Codeword cw = encode(std::span<const std::uint8_t>(c, o.K));
            if (gpu)
              std::copy(cw.d.begin(), cw.d.end(), code.begin() + f * n);
            else
              awgn_llrs(cw, ch, id0 + f, std::span<float>(llr.data() + f * n, n));
          }
        },
        1);
    DecodeResult r;
    if (gpu) {
      gpu->load_channel(K, code, ch, id0, o.llr, frac);
      r.seconds = gpu->run(o.decoder);
      r.bits = gpu->bits();
      r.iterations = gpu->iterations();
    } else {
      switch (o.llr) {
        case LlrType::f32:
          r = decode(K, std::span<const float>(llr), o.decoder);
          break;
        case LlrType::i16:
          r = decode_as<std::int16_t>(K, llr, frac, o.decoder);
          break;
        case LlrType::i8:
          r = decode_as<std::int8_t>(K, llr, frac, o.decoder);
          break;
      }
    }
    pt.decode_seconds += r.seconds;
    for (int it : r.iterations) pt.iterations += it;
    for (int f = 0; f < count; ++f) {
      std::uint64_t e = 0;
      for (int k = 0; k < o.K; ++k)
        e += r.bits[std::size_t(f) * o.K + k] != info[std::size_t(f) * o.K + k];
      pt.bit_errors += e;
      pt.frame_errors += e != 0;
    }
    pt.frames += count;
    pt.bits += std::uint64_t(count) * o.K;
    frame += count;
  }
  return pt;
}

}  // namespace sigpu::turbo
