// Test oracle and signals for the convolution tests: direct time-domain convolution in float64
// (nothing shared with the code under test) and streaming helpers.
#pragma once

#include <cstdint>
#include <vector>

#include <sigpu/convolution.hpp>

namespace sigpu::test {

using Channels = std::vector<std::vector<float>>;

enum class Input { impulse, noise, music };

/// `channels` channels of `frames` samples in [-1, 1]: a unit impulse at frame 0 (channel c at
/// frame 3c), uniform noise at half scale, or the music-like test signal.
Channels make_input(Input kind, unsigned channels, std::size_t frames, std::uint64_t seed = 1);

/// An exponentially decaying noise IR of `taps` taps with unit energy (peak below 1).
std::vector<float> make_ir(std::size_t taps, std::uint64_t seed);

/// One input, one output, one IR of `taps` taps.
convolution::Config mono_config(std::uint32_t partition, std::size_t taps);
/// Two inputs, two outputs, four IRs (taps, taps - 37, ...), wet 0.7, dry 0.3.
convolution::Config true_stereo_config(std::uint32_t partition, std::size_t taps);
/// `paths` paths with IRs of 1, 1 + tap_step, ... taps: path i is input i % inputs -> output
/// 7i % outputs, so inputs feed several outputs and outputs sum several paths.
convolution::Config many_channels_config(std::uint32_t partition, std::uint32_t inputs,
                                         std::uint32_t outputs, std::uint32_t paths,
                                         std::size_t tap_step);
/// Frames enough for every partition of the longest IR to contribute, plus `extra` periods.
std::size_t frames_for(const convolution::Config& c, std::size_t extra = 3);

/// Output `output` at frame n of the config applied to `in`, in float64.
double direct_output(const convolution::Config& c, const Channels& in, std::uint32_t output,
                     std::size_t n);

/// Feeds `in` (frames a multiple of the partition) period by period; returns the outputs.
Channels stream_cpu(convolution::CpuConvolver& conv, const Channels& in);

/// Frames to check: all of them when few, else the first and last 1024 and `spread` between.
std::vector<std::size_t> check_frames(std::size_t frames, std::size_t spread = 2048);

/// Largest |got - direct| over the frames, every output.
double max_error_vs_direct(const convolution::Config& c, const Channels& in, const Channels& got,
                           const std::vector<std::size_t>& frames);

double max_abs_diff(const Channels& a, const Channels& b);

/// 20 log10(err), for messages.
double dbfs(double err);

/// -100 dBFS: the bound for every comparison.
inline constexpr double kMaxError = 1e-5;

}  // namespace sigpu::test
