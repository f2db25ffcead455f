// The convolution effect's configuration, shared by the Effect and the runners; only in builds
// with the convolution module (SIGPU_HAVE_AUDIO_CONVOLUTION).
#pragma once

#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
#include <sigpu/convolution.hpp>

#include "audio/plan.hpp"

namespace sigpu::audio {

/// The IRs, paths, wet and dry; the partition is the engine's period, set by the runner.
struct ConvolutionSpec {
  convolution::Config config;
};

/// The config a runner builds its convolver from.
inline convolution::Config convolver_config(const ConvolutionJob& job, int period) {
  convolution::Config c = job.spec->config;
  c.partition = static_cast<std::uint32_t>(period);
  return c;
}

}  // namespace sigpu::audio
#endif
