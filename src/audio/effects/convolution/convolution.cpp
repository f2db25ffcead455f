// convolution: long FIR filters (reverbs, cabinets) from an impulse response file, through the
// convolution module (uniformly partitioned overlap-save, partition = period, so no latency
// beyond the period). The IR's channels decide the routing:
//   1 IR channel             every input channel convolved with it (as many outputs)
//   2 IR channels, 1 input   mono to stereo
//   4 IR channels, 2 inputs  true stereo: L->L, L->R, R->L, R->R
//   C IR channels, C inputs  channel c with IR c
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>
#endif

#include <algorithm>

#include "audio/effect.hpp"
#include "audio/effects/registry.hpp"

namespace sigpu::audio::effects {
namespace {

/// libsndfile's own ceiling; the benchmark's IR files hold up to kMaxNodeIrs (1024) channels.
constexpr int kMaxIrChannels = 1024;

using enum ParamType;
using enum ParamUpdate;

constexpr ParamSpec kParams[] = {
    {"ir", file, 0, 0, 0, "", fixed, "impulse response file", {}, true},
    {"wet", number, 1, 0, 4, "", fixed, "linear gain of the convolved signal"},
    {"dry", number, 0, 0, 4, "", fixed, "linear gain of the input"},
};

class Convolution : public EffectBase<Convolution> {
 public:
  Kind kind() const override { return kind_of<ConvolutionKind>(); }

  void parse(ParamReader& p, Ports& ports) override {
    name_ = p.file(kParams[0]);
    auto spec = std::make_shared<ConvolutionSpec>();
    convolution::Config& c = spec->config;
    c.wet = static_cast<float>(p.number(kParams[1]));
    c.dry = static_cast<float>(p.number(kParams[2]));
    c.irs = read_ir(p.path(name_));
    const auto C = static_cast<std::uint32_t>(ports.input);
    const auto K = static_cast<std::uint32_t>(c.irs.size());
    if (K == 2 && C == 1) {
      c.paths = {{0, 0, 0}, {0, 1, 1}};
    } else if (K == 4 && C == 2) {
      c.paths = {{0, 0, 0}, {0, 1, 1}, {1, 2, 0}, {1, 3, 1}};
    } else if (K == 1 || K == C) {
      for (std::uint32_t ch = 0; ch < C; ++ch) c.paths.push_back({ch, K == 1 ? 0 : ch, ch});
    } else {
      throw ParamError::port("input", std::to_string(C) + " channels routed to an IR of " +
                                          std::to_string(K) +
                                          " (use 1 IR channel, or as many as inputs, 2 for "
                                          "mono-to-stereo, 4 for true stereo)");
    }
    c.inputs = C;
    c.outputs = (K == 2 && C == 1) ? 2 : C;
    if (c.dry != 0 && c.inputs != c.outputs) {
      throw ParamError("dry", "needs as many outputs as inputs (mono-to-stereo is wet only)");
    }
    ports.output = static_cast<int>(c.outputs);
    spec_ = std::move(spec);
  }

  void configure(double sample_rate, int period) override {
    Effect::configure(sample_rate, period);
    if (ir_rate_ != sample_rate) {
      throw ParamError("ir", "'" + name_ + "' is at " + number_text(ir_rate_) +
                                 " Hz but the graph runs at " + number_text(sample_rate) + " Hz");
    }
    const auto P = static_cast<std::uint32_t>(period);
    if (P < convolution::kMinPartition || P > convolution::kMaxPartition || (P & (P - 1))) {
      throw ParamError("ir",
                       "partitioned convolution needs a power-of-two period in [16, 8192], "
                       "not " +
                           std::to_string(period));
    }
  }

  void setup(Plan& plan, const NodeIo& io) override {
    plan.data<ConvolutionKind>().jobs.push_back({spec_, io.in, io.out[0]});
  }
  void apply(int, double, Plan&) override {}

 private:
  std::vector<std::vector<float>> read_ir(const std::string& path) {
#ifdef SIGPU_HAVE_SNDFILE
    SF_INFO info{};
    SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
    if (!f) throw ParamError("ir", "cannot read '" + path + "': " + sf_strerror(nullptr));
    const auto close = [&] { sf_close(f); };
    if (info.channels < 1 || info.channels > kMaxIrChannels) {
      close();
      throw ParamError("ir", "'" + path + "' has " + std::to_string(info.channels) +
                                 " channels, more than the limit of " +
                                 std::to_string(kMaxIrChannels));
    }
    if (info.frames > static_cast<sf_count_t>(convolution::kMaxIrTaps)) {
      close();
      throw ParamError("ir", "'" + path + "' is longer than " +
                                 std::to_string(convolution::kMaxIrTaps) + " taps");
    }
    // The header's frame count is a claim: read in chunks, so memory follows the samples that
    // are actually there (a short file claiming 480000 frames of 1024 channels gets no 2 GB).
    const auto C = static_cast<std::size_t>(info.channels);
    std::vector<float> inter;
    constexpr sf_count_t kChunk = 4096;
    for (;;) {
      const std::size_t have = inter.size() / C;
      inter.resize((have + kChunk) * C);
      const sf_count_t got = sf_readf_float(f, inter.data() + have * C, kChunk);
      inter.resize((have + static_cast<std::size_t>(std::max<sf_count_t>(got, 0))) * C);
      if (got < kChunk) break;
      if (inter.size() / C > convolution::kMaxIrTaps) break;
    }
    close();
    const std::size_t frames = inter.size() / C;
    if (frames == 0) throw ParamError("ir", "'" + path + "' holds no samples");
    if (frames > convolution::kMaxIrTaps) {
      throw ParamError("ir", "'" + path + "' is longer than " +
                                 std::to_string(convolution::kMaxIrTaps) + " taps");
    }
    if (info.frames > 0 && frames != static_cast<std::size_t>(info.frames)) {
      throw ParamError("ir", "'" + path + "' could not be read to the end (" +
                                 std::to_string(frames) + " of " + std::to_string(info.frames) +
                                 " frames)");
    }
    ir_rate_ = info.samplerate;
    std::vector<std::vector<float>> irs(C, std::vector<float>(frames));
    for (std::size_t i = 0; i < frames; ++i) {
      for (std::size_t c = 0; c < C; ++c) irs[c][i] = inter[i * C + c];
    }
    return irs;
#else
    throw ParamError("ir", "cannot read '" + path + "': sigpu was built without libsndfile");
#endif
  }

  std::string name_;
  double ir_rate_ = 0;
  std::shared_ptr<const ConvolutionSpec> spec_;
};

}  // namespace

const EffectDescriptor kConvolution{
    "convolution", "long FIR filters (reverbs, cabinets) from an impulse response file", kParams,
    construct<Convolution>};

}  // namespace sigpu::audio::effects
#endif
