// Monte-Carlo BER/FER simulation over the whole chain.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"
#include "turbo/frames.hpp"

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
            std::uint8_t* c = info.data() + f * o.K;
            random_frame(o.seed, id0 + f, o.decoder.early_termination,
                         std::span<std::uint8_t>(c, o.K));
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

namespace {

bool below(const SimPoint& p, double target) {
  return p.fer() < target;
}

// log10(FER) linear in dB between a point above the target and one below it.
double interpolate(const SimPoint& above, const SimPoint& below, double target) {
  // No frame errors: as if there were one (the crossing lies at most at the point itself).
  const double f_below =
      std::min(target, below.frame_errors ? below.fer() : 1.0 / static_cast<double>(below.frames));
  const double la = std::log10(above.fer()), lb = std::log10(f_below);
  if (la == lb) return below.ebn0_db;
  const double t = (std::log10(target) - la) / (lb - la);
  return above.ebn0_db + t * (below.ebn0_db - above.ebn0_db);
}

}  // namespace

FerCrossing fer_crossing(const SimOptions& o, double target, double from, double step,
                         int max_points) {
  if (!(target > 0 && target < 1))
    throw Error("turbo: FER target " + std::to_string(target) + " is not in (0, 1)");
  if (!(step > 0) || !std::isfinite(step))
    throw Error("turbo: Eb/N0 step " + std::to_string(step) + " dB must be positive");
  if (!std::isfinite(from)) throw Error("turbo: Eb/N0 start " + std::to_string(from) + " dB");
  if (max_points < 2)
    throw Error("turbo: FER crossing with max_points = " + std::to_string(max_points) +
                " (at least 2)");
  FerCrossing r;
  std::vector<SimPoint>& pts = r.points;
  pts.push_back(simulate(o, from));
  // Down while the start is already below the target, else up: the walk ends on the first
  // point on the other side.
  const bool start_below = below(pts.front(), target);
  const double dir = start_below ? -1.0 : 1.0;
  for (int i = 1; i < max_points && below(pts.back(), target) == start_below; ++i)
    pts.push_back(simulate(o, from + dir * step * i));
  if (below(pts.back(), target) != start_below) {
    const SimPoint& last = pts.back();
    const SimPoint& prev = pts[pts.size() - 2];
    r.ebn0_db = start_below ? interpolate(last, prev, target) : interpolate(prev, last, target);
    r.found = true;
  }
  if (start_below) std::reverse(pts.begin(), pts.end());
  return r;
}

}  // namespace sigpu::turbo
