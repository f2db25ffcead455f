// A backend runs a Plan one period at a time. The CPU runner is the reference (serial) and the
// thread-pool backend; the CUDA runner turns each period into one CUDA graph launch. Both run
// each kind through the kind's own processing (effects/*/).
#pragma once

#include <memory>
#include <string>

#include "audio/plan.hpp"

namespace sigpu::audio {

class Runner {
 public:
  virtual ~Runner() = default;
  /// One period. in and out are planar: channel c at in + c * period. For the CUDA runner
  /// they must be device-accessible (device or pinned host memory). Uses the plan's parameters
  /// (uploading those that changed) and clears their dirty flags.
  virtual void process(const float* in, float* out) = 0;
  /// Buffers process() can be given (pinned for CUDA, so the kernels reach them directly).
  virtual float* input_buffer() = 0;
  virtual float* output_buffer() = 0;
  virtual int kernels() const { return 0; }
  /// With Plan::meters, after process(): per node output channel (Plan::bus_channels()), its
  /// peak and sum of squares over the last period, interleaved; else nullptr.
  virtual const float* meters() const = 0;
  /// Empty, or why the runner's threads did not get the SCHED_FIFO asked for.
  virtual std::string realtime_note() const { return {}; }
};

/// threads: 1 = serial reference, 0 = one per core; fifo_priority > 0: the pool's workers under
/// SCHED_FIFO at that priority. The plan outlives the runner.
std::unique_ptr<Runner> make_cpu_runner(Plan& plan, unsigned threads, int fifo_priority = 0);
/// Throws Error when sigpu was built without CUDA or no device is present.
std::unique_ptr<Runner> make_cuda_runner(Plan& plan);

}  // namespace sigpu::audio
