// Processor (one instance, the serial reference) and CpuBatch (many instances on a pool).
#include "nam/processor.hpp"
#include "core/no_denormals.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/rt_pool.hpp"
#include "nam/cpu_engine.hpp"
#include "nam/layout.hpp"

namespace sigpu::nam {

void check_sample_rate(const Model& m, double sample_rate) {
  if (std::abs(sample_rate - m.sample_rate) > 1e-6 * m.sample_rate)
    throw Error(m.source + ": the model was trained at " +
                std::to_string(std::lround(m.sample_rate)) + " Hz" +
                (m.sample_rate_in_file ? "" : " (no sample_rate in the file: 48 kHz assumed)") +
                " but runs at " + std::to_string(std::lround(sample_rate)) +
                " Hz; sigpu does not resample NAM models");
}

void check_max_frames(int max_frames) {
  if (max_frames < 1 || max_frames > (1 << 17))
    throw Error("nam: max_frames must be 1..131072, got " + std::to_string(max_frames));
}

std::unique_ptr<CpuEngine> make_cpu_engine(const Model& m, int max_frames) {
  switch (m.architecture) {
    case Architecture::wavenet:
      if (!m.sizes.empty()) break;
      return a2_feature(m.wavenet).empty() ? make_wavenet_engine(m, max_frames)
                                           : make_wavenet_a2_engine(m, max_frames);
    case Architecture::lstm:
      return make_lstm_engine(m, max_frames);
    case Architecture::convnet:
      return make_convnet_engine(m, max_frames);
    case Architecture::linear:
      return make_linear_engine(m, max_frames);
    case Architecture::slimmable_container:
      break;
  }
  throw Error(m.source + ": a model of several sizes has one engine per size");
}

struct Processor::Impl {
  Model model;
  int max_frames;
  // One engine per size (Model::sizes), or the model's own. All run on every period, so that
  // a size change finds its engine warm; the output crossfades from the old to the new.
  std::vector<std::unique_ptr<CpuEngine>> engines;
  std::vector<long> prewarm;
  std::vector<float> input, scratch;  // a period's input; each engine's output
  std::atomic<int> wanted{0};
  int active = 0, fading_from = -1, faded = 0;

  Impl(const Model& m, const Options& o) : model(m), max_frames(o.max_frames) {
    check_sample_rate(m, o.sample_rate);
    check_max_frames(o.max_frames);
    if (m.sizes.empty()) {
      engines.push_back(make_cpu_engine(m, o.max_frames));
      prewarm.push_back(m.prewarm_samples());
    }
    for (const SizedModel& s : m.sizes) {
      engines.push_back(make_cpu_engine(*s.model, o.max_frames));
      prewarm.push_back(s.model->prewarm_samples());
    }
    active = m.size_index(1.0);
    wanted = active;
    input.resize(static_cast<std::size_t>(max_frames));
    scratch.resize(engines.size() * static_cast<std::size_t>(max_frames));
    reset();
  }

  void reset() {
    std::vector<float> silence(max_frames, 0.0f), sink(max_frames);
    for (std::size_t e = 0; e < engines.size(); ++e) {
      engines[e]->clear();
      for (long left = prewarm[e]; left > 0; left -= max_frames)
        engines[e]->process(silence.data(), sink.data(),
                            static_cast<int>(std::min<long>(left, max_frames)));
    }
    active = wanted.load(std::memory_order_relaxed);
    fading_from = -1;
  }

  void process(const float* in, float* out, int n) noexcept {
    if (engines.size() == 1) return engines[0]->process(in, out, n);
    std::copy(in, in + n, input.begin());
    for (std::size_t e = 0; e < engines.size(); ++e)
      engines[e]->process(input.data(), scratch.data() + e * max_frames, n);
    const int want = wanted.load(std::memory_order_relaxed);
    if (fading_from < 0 && want != active) {
      fading_from = active;
      active = want;
      faded = 0;
    }
    const float* now = scratch.data() + static_cast<std::size_t>(active) * max_frames;
    if (fading_from < 0) {
      std::copy(now, now + n, out);
      return;
    }
    const float* was = scratch.data() + static_cast<std::size_t>(fading_from) * max_frames;
    constexpr float step = 1.0f / kSizeCrossfadeFrames;
    for (int t = 0; t < n; ++t) {
      const float g = faded < kSizeCrossfadeFrames ? static_cast<float>(faded++) * step : 1.0f;
      out[t] = was[t] + g * (now[t] - was[t]);
    }
    if (faded >= kSizeCrossfadeFrames) fading_from = -1;
  }
};

Processor::Processor(const Model& m, const Options& o) : impl_(std::make_unique<Impl>(m, o)) {}
Processor::~Processor() = default;
Processor::Processor(Processor&&) noexcept = default;
Processor& Processor::operator=(Processor&&) noexcept = default;

void Processor::process(const float* in, float* out, int frames) noexcept {
  for (int done = 0; done < frames;) {
    const int n = std::min(frames - done, impl_->max_frames);
    impl_->process(in + done, out + done, n);
    done += n;
  }
}
void Processor::reset() {
  impl_->reset();
}
const Model& Processor::model() const {
  return impl_->model;
}
void Processor::set_size(double size) noexcept {
  impl_->wanted.store(impl_->model.size_index(size), std::memory_order_relaxed);
}

// Worker threads that spin between periods instead of sleeping on a condition variable: a
// sleeping pool wakes in tens of microseconds on average and in milliseconds at worst, which
// misses 32-frame deadlines. Each thread owns a fixed slice of the instances; after a while
// without work a spinning thread yields its core to others.
struct CpuBatch::Impl {
  std::vector<Processor> instances;
  unsigned threads = 1;
  // Workers spin between periods (core/rt_pool.hpp) and take instances one at a time, so a
  // worker the OS preempts mid-period leaves the rest of its share to the others.
  std::unique_ptr<RtPool> pool;

  explicit Impl(unsigned t) : threads(t ? t : std::max(1u, std::thread::hardware_concurrency())) {}

  void start() {
    threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(instances.size())));
    if (threads > 1) pool = std::make_unique<RtPool>(RtPoolOptions{.threads = threads});
  }

  void process(const float* const* in, float* const* out, int frames) {
    const ScopedNoDenormals flush;  // as on the pool's threads
    const auto run = [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) instances[i].process(in[i], out[i], frames);
    };
    if (pool)
      pool->run(instances.size(), run, 1);
    else
      run(0, instances.size());
  }
};

CpuBatch::CpuBatch(std::span<const Model* const> models, const Options& o, unsigned threads)
    : impl_(std::make_unique<Impl>(threads)) {
  impl_->instances.reserve(models.size());
  for (const Model* m : models) impl_->instances.emplace_back(*m, o);
  impl_->start();
}
CpuBatch::~CpuBatch() = default;
CpuBatch::CpuBatch(CpuBatch&&) noexcept = default;
CpuBatch& CpuBatch::operator=(CpuBatch&&) noexcept = default;

int CpuBatch::size() const {
  return static_cast<int>(impl_->instances.size());
}
unsigned CpuBatch::threads() const {
  return impl_->threads;
}
void CpuBatch::process(const float* const* in, float* const* out, int frames) {
  if (!impl_->instances.empty()) impl_->process(in, out, frames);
}
void CpuBatch::set_size(int instance, double size) noexcept {
  impl_->instances[static_cast<std::size_t>(instance)].set_size(size);
}
void CpuBatch::reset() {
  for (Processor& p : impl_->instances) p.reset();
}

}  // namespace sigpu::nam
