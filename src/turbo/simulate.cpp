// Monte-Carlo BER/FER simulation over the whole chain.
#include <algorithm>
#include <random>
#include <string>

#include <sigpu/turbo.hpp>

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
  std::uint64_t frame = 0;
  while (frame < o.max_frames &&
         (o.target_frame_errors == 0 || pt.frame_errors < o.target_frame_errors)) {
    const int count = static_cast<int>(std::min<std::uint64_t>(o.batch, o.max_frames - frame));
    std::vector<int> K(count, o.K);
    std::vector<std::uint8_t> info(std::size_t(count) * o.K);
    std::vector<float> llr(std::size_t(count) * n);
    for (int f = 0; f < count; ++f) {
      std::mt19937_64 rng(o.seed * 0x9E3779B97F4A7C15ull + frame + f);
      std::uint8_t* c = info.data() + std::size_t(f) * o.K;
      for (int k = 0; k < o.K; ++k) c[k] = static_cast<std::uint8_t>(rng() & 1u);
      const Codeword cw = encode(std::span<const std::uint8_t>(c, o.K));
      awgn_llrs(cw, ch, frame + f, std::span<float>(llr.data() + std::size_t(f) * n, n));
    }
    DecodeResult r;
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
    pt.decode_seconds += r.seconds;
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
