// Processor (one instance, the serial reference) and CpuBatch (many instances on a pool).
#include "nam/processor.hpp"
#include "core/no_denormals.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <thread>
#include <vector>

#include "core/rt_pool.hpp"
#include "nam/cpu_engine.hpp"

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
      return make_wavenet_engine(m, max_frames);
    case Architecture::lstm:
      return make_lstm_engine(m, max_frames);
    case Architecture::convnet:
      return make_convnet_engine(m, max_frames);
    case Architecture::linear:
      return make_linear_engine(m, max_frames);
  }
  throw Error(m.source + ": unknown architecture");
}

struct Processor::Impl {
  Model model;
  int max_frames;
  std::unique_ptr<CpuEngine> engine;

  Impl(const Model& m, const Options& o) : model(m), max_frames(o.max_frames) {
    check_sample_rate(m, o.sample_rate);
    check_max_frames(o.max_frames);
    engine = make_cpu_engine(m, o.max_frames);
    reset();
  }

  void reset() {
    engine->clear();
    std::vector<float> silence(max_frames, 0.0f), sink(max_frames);
    for (long left = model.prewarm_samples(); left > 0; left -= max_frames)
      engine->process(silence.data(), sink.data(),
                      static_cast<int>(std::min<long>(left, max_frames)));
  }
};

Processor::Processor(const Model& m, const Options& o) : impl_(std::make_unique<Impl>(m, o)) {}
Processor::~Processor() = default;
Processor::Processor(Processor&&) noexcept = default;
Processor& Processor::operator=(Processor&&) noexcept = default;

void Processor::process(const float* in, float* out, int frames) noexcept {
  for (int done = 0; done < frames;) {
    const int n = std::min(frames - done, impl_->max_frames);
    impl_->engine->process(in + done, out + done, n);
    done += n;
  }
}
void Processor::reset() {
  impl_->reset();
}
const Model& Processor::model() const {
  return impl_->model;
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
void CpuBatch::reset() {
  for (Processor& p : impl_->instances) p.reset();
}

}  // namespace sigpu::nam
