// The effect types, one file each; make_effect() (registry.cpp) maps graph-file names to them.
#pragma once

#include <memory>

#include "audio/effect.hpp"

namespace sigpu::audio::effects {

std::unique_ptr<Effect> make_gain();
std::unique_ptr<Effect> make_pan();
std::unique_ptr<Effect> make_mixer();
std::unique_ptr<Effect> make_router();
std::unique_ptr<Effect> make_eq();
std::unique_ptr<Effect> make_gate();
std::unique_ptr<Effect> make_compressor();
std::unique_ptr<Effect> make_delay();
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
std::unique_ptr<Effect> make_convolution();
#endif
#ifdef SIGPU_HAVE_AUDIO_NAM
std::unique_ptr<Effect> make_nam();
#endif

}  // namespace sigpu::audio::effects
