// An independent float64 oracle for NAM models: the whole signal at once, written plainly
// from the architecture description (PyTorch's layers as the NAM trainer builds them), with
// its own walk through the weights. It shares no code with sigpu's inference.
#pragma once

#include <vector>

#include <sigpu/nam.hpp>

namespace sigpu::test {

/// The model's output for `x`, after `prewarm` samples of silence (taken from zero state).
std::vector<double> nam_reference(const nam::Model& m, const std::vector<float>& x, long prewarm);

}  // namespace sigpu::test
