// The CUDA kernel for any WaveNet (wavenet_a2_kernel.cuh), run on the CPU under
// cuda_emulation.hpp against Processor (the CPU reference, matched to NeuralAmpModelerCore): every
// fixture of nam and nam-a2 (LSTMs included), all in one launch per period, at an even and an odd
// period, with a size change of a slimmable model at a period boundary. Buffers in a twin::Arena,
// whose guard bands catch a write out of bounds (shared memory included).
#include "support/cuda_emulation.hpp"
// (the emulation first)
#include "nam/cuda/wavenet_a2_kernel.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "nam/gpu_wavenet_program.hpp"
#include "nam/nam_fixtures.hpp"
#include "support/twin.hpp"

namespace nam = sigpu::nam;
namespace twin = sigpu::test::twin;
using sigpu::test::emulation::Barriers;

namespace {

constexpr int kThreads = 3;  // not a divisor of the rows: the strided loops cover them
using sigpu::test::gpu_tolerance;

/// Every instance of `models` through the emulated kernel, period by period; `sizes[i]` (a
/// size index per period boundary, or empty) is what instance i asks for from then on.
class EmulatedBatch {
 public:
  /// Rings and buffers for periods of up to max_frames; pre-warmed in periods of that size
  /// (the output does not depend on the period size).
  EmulatedBatch(const std::vector<const nam::Model*>& models, int max_frames, bool shared)
      : n_(static_cast<int>(models.size())),
        max_frames_(max_frames),
        shared_(shared),
        p_(nam::wavenet_program(models, max_frames)) {
    weights_ = arena_.input("weights", p_.weights);
    p_.bind_weights(weights_);
    args_.nets = arena_.input("nets", p_.nets);
    args_.arrays = arena_.input("arrays", p_.arrays);
    args_.layers = arena_.input("layers", p_.layers);
    args_.instances = arena_.input("instances", p_.instances);
    args_.state = arena_.in_out("state", p_.initial_state);
    args_.positions = arena_.in_out("positions", std::vector<long long>(n_, 0));
    std::vector<nam::cuda::SizeFade> fades;
    for (const nam::Model* m : models) {
      wanted_.push_back(m->size_index(1.0));
      fades.push_back({wanted_.back(), -1, 0});
    }
    args_.fades = arena_.in_out("fades", fades);
    args_.wanted = wanted_.data();
    in_ = arena_.in_out("in", std::vector<float>(static_cast<std::size_t>(n_) * max_frames, 0));
    out_ = arena_.output<float>("out", static_cast<std::size_t>(n_) * max_frames);
    for (int i = 0; i < n_; ++i) {
      in_ptrs_.push_back(in_ + i * max_frames);
      out_ptrs_.push_back(out_ + i * max_frames);
    }
    args_.inputs = arena_.input("input pointers", in_ptrs_);
    args_.outputs = arena_.input("output pointers", out_ptrs_);
    args_.widest = p_.widest;
    args_.max_sizes = p_.max_sizes;
    args_.staged_floats = shared ? p_.largest_net : 0;
    const long work = nam::cuda::a2_work_floats(p_.widest, p_.max_sizes, max_frames);
    smem_ = arena_.in_out("shared memory", std::vector<float>(work + args_.staged_floats, 0.0f));
    std::vector<float> silence(static_cast<std::size_t>(max_frames), 0.0f), sink(silence);
    for (long left = p_.prewarm; left > 0; left -= max_frames) {
      const int f = static_cast<int>(std::min<long>(left, max_frames));
      std::vector<const float*> in(n_, silence.data());
      std::vector<float*> out(n_, sink.data());
      process(in, out, f);
    }
  }

  void set_size_index(int instance, int index) { wanted_[instance] = index; }

  void process(const std::vector<const float*>& in, const std::vector<float*>& out, int frames) {
    for (int i = 0; i < n_; ++i) std::copy(in[i], in[i] + frames, in_ptrs_[i]);
    const nam::cuda::A2Args args = args_;
    float* smem = smem_;
    if (shared_)
      sigpu::test::emulation::launch({static_cast<unsigned>(n_)}, {kThreads}, Barriers::block, [&] {
        nam::cuda::wavenet_a2_period<true>(args, smem, frames);
      });
    else
      sigpu::test::emulation::launch({static_cast<unsigned>(n_)}, {kThreads}, Barriers::block, [&] {
        nam::cuda::wavenet_a2_period<false>(args, smem, frames);
      });
    for (int i = 0; i < n_; ++i) std::copy(out_ptrs_[i], out_ptrs_[i] + frames, out[i]);
  }

  ::testing::AssertionResult intact() const { return arena_.intact(); }

 private:
  int n_, max_frames_;
  bool shared_;
  nam::WaveNetProgram p_;
  twin::Arena arena_;
  float* weights_ = nullptr;
  float *in_ = nullptr, *out_ = nullptr, *smem_ = nullptr;
  std::vector<float*> in_ptrs_, out_ptrs_;
  std::vector<int> wanted_;
  nam::cuda::A2Args args_{};
};

struct Loaded {
  std::string name;
  nam::Model model;
};

std::vector<Loaded> model_fixtures() {
  std::vector<Loaded> out;
  for (const char* f : {"wavenet.nam", "lstm.nam", "wavenet_a1_standard.nam"})
    if (std::filesystem::exists(sigpu::test::nam_fixture(f)))
      out.push_back({f, nam::load(sigpu::test::nam_fixture(f))});
  const auto dir = sigpu::test::fixtures_dir() / "nam-a2";
  for (const char* f : {"A2.nam", "slimmable_container.nam", "slimmable_wavenet.nam",
                        "wavenet_a2_max.nam", "wavenet_condition_dsp.nam"})
    if (std::filesystem::exists(dir / f)) out.push_back({f, nam::load(dir / f)});
  return out;
}

}  // namespace

// Every fixture in one launch per period, twice with other inputs for some, through
// shared and global weights; then a size change at a period boundary.
TEST(NamA2KernelOnCpu, EveryFixtureInOneLaunchMatchesTheCpu) {
  const std::vector<Loaded> fx = model_fixtures();
  if (fx.size() < 8) GTEST_SKIP() << "NAM fixtures absent under " << sigpu::test::fixtures_dir();
  const std::vector<float> music = sigpu::test::nam_music_input();
  const std::size_t samples = 500;
  std::vector<const nam::Model*> models;
  std::vector<std::string> names;
  std::vector<std::vector<float>> in;
  for (std::size_t k = 0; k <= fx.size(); ++k) {  // and one model twice
    const Loaded& l = fx[k % fx.size()];
    models.push_back(&l.model);
    names.push_back(l.name);
    std::vector<float> x(samples);
    for (std::size_t t = 0; t < samples; ++t)
      x[t] = (1.0f - 0.15f * static_cast<float>(k % 3)) * music[(t + 1531 * k) % music.size()];
    in.push_back(std::move(x));
  }
  for (const auto& [period, shared] : {std::pair{64, true}, std::pair{37, false}}) {
    EmulatedBatch batch(models, 1024, shared);
    std::vector<std::vector<float>> out(models.size(), std::vector<float>(samples));
    for (std::size_t at = 0; at < samples; at += period) {
      const int f = static_cast<int>(std::min<std::size_t>(period, samples - at));
      std::vector<const float*> ip;
      std::vector<float*> op;
      for (std::size_t i = 0; i < models.size(); ++i) {
        ip.push_back(in[i].data() + at);
        op.push_back(out[i].data() + at);
      }
      batch.process(ip, op, f);
    }
    EXPECT_TRUE(batch.intact());
    for (std::size_t i = 0; i < models.size(); ++i) {
      const std::vector<float> want = sigpu::test::nam_cpu_run(*models[i], in[i], period);
      EXPECT_TRUE(twin::equal(want, out[i], gpu_tolerance(want)))
          << names[i] << " (instance " << i << ") period " << period;
      if (i < fx.size())
        std::printf("[ NamA2KernelOnCpu ] %-26s period %2d: max error %.1f dBFS\n",
                    names[i].c_str(), period, sigpu::test::max_error_dbfs(want, out[i]));
    }
  }
}

TEST(NamA2KernelOnCpu, SizeChangeCrossfadesAtAPeriodBoundaryAsTheCpuDoes) {
  const auto dir = sigpu::test::fixtures_dir() / "nam-a2";
  if (!std::filesystem::exists(dir / "A2.nam")) GTEST_SKIP() << dir << " absent";
  const nam::Model a2 = nam::load(dir / "A2.nam");
  const nam::Model slim = nam::load(dir / "slimmable_wavenet.nam");
  const nam::Model box = nam::load(dir / "slimmable_container.nam");  // 0.2: its LSTM
  const std::vector<const nam::Model*> models{&a2, &slim, &box};
  const std::vector<double> sizes{0.2, 0.4, 0.2};
  const std::vector<float> music = sigpu::test::nam_music_input();
  const int period = 96;
  const std::size_t samples = 1344;  // the 1024-frame crossfade within
  const long switch_at = 2 * period;
  const std::vector<float> x(music.begin(), music.begin() + samples);
  EmulatedBatch batch(models, 1024, true);
  std::vector<std::vector<float>> out(models.size(), std::vector<float>(samples));
  for (std::size_t at = 0; at < samples; at += period) {
    std::vector<const float*> in;
    std::vector<float*> o;
    for (std::size_t i = 0; i < models.size(); ++i) {
      if (static_cast<long>(at) == switch_at)
        batch.set_size_index(static_cast<int>(i), models[i]->size_index(sizes[i]));
      in.push_back(x.data() + at);
      o.push_back(out[i].data() + at);
    }
    batch.process(in, o, period);
  }
  EXPECT_TRUE(batch.intact());
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::vector<float> want =
        sigpu::test::nam_cpu_run(*models[i], x, period, switch_at, sizes[i]);
    EXPECT_TRUE(twin::equal(want, out[i], gpu_tolerance(want))) << i;
    // The change is audible: without it the output differs.
    EXPECT_GT(sigpu::test::max_error_dbfs(sigpu::test::nam_cpu_run(*models[i], x, period), out[i]),
              -60.0)
        << i;
  }
}

// What the kernel cannot run is refused when the batch is built, naming the model and feature.
TEST(NamA2KernelOnCpu, ProgramRefusesALinearSizeNamingIt) {
  auto fir = std::make_shared<nam::Model>();
  fir->source = "fir.nam";
  fir->architecture = nam::Architecture::linear;
  fir->weights = {1.0f};
  nam::Model c;
  c.source = "container.nam";
  c.architecture = nam::Architecture::slimmable_container;
  c.sizes.push_back({.max_value = 1.0, .channels = {}, .model = fir});
  const std::vector<const nam::Model*> models{&c};
  try {
    (void)nam::wavenet_program(models, 64);
    ADD_FAILURE() << "a container with a Linear size accepted";
  } catch (const sigpu::UnsupportedError& e) {
    const std::string s = e.what();
    EXPECT_NE(s.find("fir.nam: the cuda backend cannot run this model: Linear"), std::string::npos)
        << s;
  }
}
