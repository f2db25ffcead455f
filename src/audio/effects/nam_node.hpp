// The nam effect's configuration, shared by the Effect and the runners; only in builds with the
// nam module (SIGPU_HAVE_AUDIO_NAM).
#pragma once

#ifdef SIGPU_HAVE_AUDIO_NAM
#include <memory>

#include <sigpu/nam.hpp>

#include "audio/plan.hpp"

namespace sigpu::audio {

/// One nam node: every channel runs its own instance of `model`.
struct NamSpec {
  std::shared_ptr<const nam::Model> model;
  double sample_rate = 48000;
  float input_gain = 1, output_gain = 1;  ///< linear, applied in float like the tests do
  double size = 1;                        ///< a slimmable model's size (nam::Processor::set_size)
};

}  // namespace sigpu::audio
#endif
