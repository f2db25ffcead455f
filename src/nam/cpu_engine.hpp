// The CPU inference engines behind Processor: one per architecture, each streaming period by
// period. Every output frame is computed by the same operations in the same order whatever
// the period size, so streamed output is bit-identical to one-piece output.
#pragma once

#include <memory>

#include <sigpu/nam.hpp>

namespace sigpu::nam {

class CpuEngine {
 public:
  virtual ~CpuEngine() = default;
  /// Audio thread: 0 <= frames <= the max_frames given at construction; in may equal out.
  virtual void process(const float* in, float* out, int frames) noexcept = 0;
  /// Back to the state of a model just read from its file (zero histories; the LSTM's
  /// initial h and c), before any pre-warm.
  virtual void clear() = 0;
};

std::unique_ptr<CpuEngine> make_wavenet_engine(const Model& m, int max_frames);
/// Any WaveNet, format 0.6/0.7 features included (the others take the faster A1 engine).
std::unique_ptr<CpuEngine> make_wavenet_a2_engine(const Model& m, int max_frames);
std::unique_ptr<CpuEngine> make_lstm_engine(const Model& m, int max_frames);
std::unique_ptr<CpuEngine> make_convnet_engine(const Model& m, int max_frames);
std::unique_ptr<CpuEngine> make_linear_engine(const Model& m, int max_frames);
std::unique_ptr<CpuEngine> make_cpu_engine(const Model& m, int max_frames);

}  // namespace sigpu::nam
