// The CPU backend: the plan's groups level by level; within a level every job (one channel of
// one node) is independent, so the thread pool splits them.
#include <algorithm>
#include <cstring>

#include "audio/convolution_node.hpp"
#include "audio/effects/nam_node.hpp"
#include "audio/runner.hpp"
#include "core/no_denormals.hpp"
#include "core/rt_pool.hpp"

namespace sigpu::audio {
namespace {

class CpuRunner final : public Runner {
 public:
  CpuRunner(const Plan& plan, unsigned threads) : plan_(plan) {
    arena_.assign(plan.arena, 0.0f);
    input_.assign(std::size_t(plan.inputs) * plan.period, 0.0f);
    output_.assign(plan.outputs.size() * plan.period, 0.0f);
    eq_state_.assign(plan.eq_state, 0.0);
    gate_state_.assign(plan.gate_state, {});
    compressor_state_.assign(plan.compressor_state, {});
    delay_state_.assign(plan.delay_state, {});
    rings_.assign(plan.ring, 0.0f);
    // Per level: its groups and the running count of their jobs, for the parallel split.
    levels_.resize(plan.levels);
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
      auto& level = levels_[plan.groups[g].level];
      level.groups.push_back(static_cast<int>(g));
      level.starts.push_back(level.jobs);
      level.jobs += plan.groups[g].end - plan.groups[g].begin;
      level.heavy |= plan.groups[g].kind == Kind::convolution || plan.groups[g].kind == Kind::nam;
    }
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
    for (const auto& job : plan.convolution) {
      const auto config = convolver_config(job, plan.period);
      convolvers_.push_back({convolution::CpuConvolver(config),
                             HostVector<float>(std::size_t(config.inputs) * plan.period)});
    }
#endif
#ifdef SIGPU_HAVE_AUDIO_NAM
    // One instance per channel, as separate jobs: the runner's pool already spreads them over
    // the cores, so a nam::CpuBatch (a second spinning pool) would only compete with it.
    for (const auto& job : plan.nam) {
      const NamSpec& s = *job.spec;
      nams_.push_back(
          {nam::Processor(*s.model, {.sample_rate = s.sample_rate, .max_frames = plan.period}),
           HostVector<float>(plan.period)});
      if (!s.model->sizes.empty()) {
        nams_.back().processor.set_size(s.size);
        nams_.back().processor.reset();
      }
    }
#endif
    if (threads != 1) pool_ = std::make_unique<RtPool>(RtPoolOptions{.threads = threads});
  }

  float* input_buffer() override {
    return input_.data();
  }
  float* output_buffer() override {
    return output_.data();
  }

  void process(const float* in, float* out, Params& params) override {
    const ScopedNoDenormals flush;  // decaying filters and envelopes must not slow a period
    params_ = &params;
    const std::size_t n = plan_.period;
    std::memcpy(arena_.data(), in, sizeof(float) * n * plan_.inputs);
    for (const auto& level : levels_) {
      // About four chunks per thread, but no chunk below a few channels where a job is short
      // (a channel of an effect); a convolution node or an amp model is a long job on its own.
      const std::size_t grain =
          pool_ ? std::max<std::size_t>(level.heavy ? 1 : 4, level.jobs / (4 * pool_->size())) : 0;
      if (pool_ && level.jobs > grain) {
        pool_->run(
            level.jobs, [&](std::size_t b, std::size_t e) { run_range(level, b, e); }, grain);
      } else {
        run_range(level, 0, level.jobs);
      }
    }
    for (std::size_t c = 0; c < plan_.outputs.size(); ++c) {
      std::memcpy(out + c * n, arena_.data() + plan_.outputs[c], sizeof(float) * n);
    }
    params.dirty = {};
  }

 private:
  struct Level {
    std::vector<int> groups;
    std::vector<std::size_t> starts;
    std::size_t jobs = 0;
    bool heavy = false;  ///< has convolution or nam jobs
  };

  void run_range(const Level& level, std::size_t begin, std::size_t end) {
    auto k = std::upper_bound(level.starts.begin(), level.starts.end(), begin) -
             level.starts.begin() - 1;
    for (std::size_t i = begin; i < end;) {
      const Group& g = plan_.groups[level.groups[k]];
      const std::size_t group_end = level.starts[k] + (g.end - g.begin);
      const std::size_t stop = std::min(end, group_end);
      run_jobs(g.kind, g.begin + (i - level.starts[k]), g.begin + (stop - level.starts[k]));
      i = stop;
      ++k;
    }
  }

  void run_jobs(Kind kind, std::size_t begin, std::size_t end) {
    const int n = plan_.period;
    float* arena = arena_.data();
    const Params& p = *params_;
    for (std::size_t j = begin; j < end; ++j) {
      switch (kind) {
        case Kind::mix:
          dsp::mix_job(plan_.mix[j], plan_.terms.data(), p.gains.data(), arena, n);
          break;
        case Kind::eq:
          dsp::eq_job(plan_.eq[j], p.bands.data(), eq_state_.data(), arena, n);
          break;
        case Kind::gate:
          dsp::gate_job(plan_.gate[j], p.gate.data(), gate_state_.data(), arena, n);
          break;
        case Kind::compressor:
          dsp::compressor_job(plan_.compressor[j], p.compressor.data(), compressor_state_.data(),
                              arena, n);
          break;
        case Kind::delay:
          dsp::delay_job(plan_.delay[j], p.delay.data(), delay_state_.data(), rings_.data(), arena,
                         n);
          break;
        case Kind::convolution:
          convolve(j);
          break;
        case Kind::nam:
          amp(j);
          break;
      }
    }
  }

  /// A convolution node: its inputs gathered, then the convolver writes the node's outputs
  /// (contiguous in the arena).
  void convolve([[maybe_unused]] std::size_t j) {
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
    const ConvolutionJob& job = plan_.convolution[j];
    Convolver& c = convolvers_[j];
    const std::size_t n = plan_.period;
    for (std::size_t ch = 0; ch < job.in.size(); ++ch) {
      std::memcpy(c.in.data() + ch * n, arena_.data() + job.in[ch], n * sizeof(float));
    }
    c.convolver.process(c.in, std::span<float>(arena_.data() + job.out, c.convolver.outputs() * n));
#endif
  }

  /// One channel of a nam node: input gain into the scratch, the model, output gain in place.
  void amp([[maybe_unused]] std::size_t j) {
#ifdef SIGPU_HAVE_AUDIO_NAM
    const NamJob& job = plan_.nam[j];
    Amp& a = nams_[j];
    const int n = plan_.period;
    const float* in = arena_.data() + job.in;
    float* out = arena_.data() + job.out;
    for (int i = 0; i < n; ++i) a.in[i] = in[i] * job.spec->input_gain;
    if (!job.spec->model->sizes.empty()) a.processor.set_size(params_->nam_size[job.size_slot]);
    a.processor.process(a.in.data(), out, n);
    for (int i = 0; i < n; ++i) out[i] *= job.spec->output_gain;
#endif
  }

#ifdef SIGPU_HAVE_AUDIO_NAM
  struct Amp {
    nam::Processor processor;
    HostVector<float> in;
  };
  std::vector<Amp> nams_;
#endif

#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
  struct Convolver {
    convolution::CpuConvolver convolver;
    HostVector<float> in;
  };
  std::vector<Convolver> convolvers_;
#endif

  const Plan& plan_;
  HostVector<float> arena_, input_, output_, rings_;
  HostVector<double> eq_state_;
  HostVector<dsp::GateState> gate_state_;
  HostVector<dsp::CompressorState> compressor_state_;
  HostVector<dsp::DelayState> delay_state_;
  std::vector<Level> levels_;
  // Workers spin between periods (core/rt_pool.hpp): the general ThreadPool's condition
  // variable wake-ups missed 0.67 ms deadlines even at 8 channels on a 16-core machine.
  std::unique_ptr<RtPool> pool_;
  const Params* params_ = nullptr;
};

}  // namespace

std::unique_ptr<Runner> make_cpu_runner(const Plan& plan, unsigned threads) {
  return std::make_unique<CpuRunner>(plan, threads);
}

}  // namespace sigpu::audio
