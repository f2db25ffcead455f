// Checks shared by the CPU and CUDA front ends.
#pragma once

#include <sigpu/nam.hpp>

namespace sigpu::nam {

/// Throws Error when the caller's rate is not the model's (sigpu does not resample).
void check_sample_rate(const Model& m, double sample_rate);
/// Throws Error for max_frames outside 1..131072 (histories are sized for max_frames).
void check_max_frames(int max_frames);

}  // namespace sigpu::nam
