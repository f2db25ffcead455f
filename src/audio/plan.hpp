// What an Engine runs: every effect's per-channel jobs, grouped by (level, kind) so that one
// group is one batched kernel (CUDA) or one slice of a parallel loop (CPU), and the parameter
// arrays the effects write. Offsets count floats in one arena: the graph inputs first, then
// each node's output channels, `period` floats per channel.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "audio/dsp/biquad.hpp"
#include "audio/dsp/compressor.hpp"
#include "audio/dsp/delay.hpp"
#include "audio/dsp/gate.hpp"
#include "audio/dsp/mix.hpp"
#include "audio/memory.hpp"

namespace sigpu::audio {

enum class Kind : std::uint8_t { mix, eq, gate, compressor, delay, convolution, nam };
inline constexpr int kKinds = 7;

/// A convolution node (audio/convolution_node.hpp; only in builds with the convolution
/// module). Unlike the other kinds it is one job per node: the convolution engine batches its
/// own channels and paths.
struct ConvolutionSpec;
struct ConvolutionJob {
  std::shared_ptr<const ConvolutionSpec> spec;
  std::vector<std::uint32_t> in;  ///< arena offsets of the input channels
  std::uint32_t out = 0;          ///< arena offset of output channel 0 (the rest follow)
};

/// One channel of a nam node (audio/effects/nam_node.hpp; only in builds with the nam module):
/// its own model instance, from arena channel `in` to arena channel `out`.
struct NamSpec;
struct NamJob {
  std::shared_ptr<const NamSpec> spec;
  std::uint32_t in = 0, out = 0;
  std::uint32_t size_slot = 0;  ///< Params::nam_size
};

/// Parameter arrays, written on the host by the effects at period boundaries (and copied to
/// the device by the CUDA backend when dirty).
struct Params {
  HostVector<dsp::GainRamp> gains;
  HostVector<dsp::EqBand> bands;
  HostVector<dsp::GateParams> gate;
  HostVector<dsp::CompressorParams> compressor;
  HostVector<dsp::DelayParams> delay;
  std::vector<double> nam_size;        ///< per nam node: a slimmable model's size (CPU backends)
  std::array<bool, kKinds> dirty{};    ///< changed since the device copy
  std::array<bool, kKinds> ramping{};  ///< holds a ramp that settle() must end

  void touch(Kind k, bool ramp) {
    dirty[static_cast<int>(k)] = true;
    if (ramp) ramping[static_cast<int>(k)] = true;
  }
  /// After a period: every ramp has reached its target.
  void settle();
};

struct Group {
  Kind kind{};
  int level = 0;
  std::uint32_t begin = 0, end = 0;  ///< jobs [begin, end) of the kind's job array
  std::vector<int> deps;             ///< groups that must finish first
  bool reads_input = false;          ///< reads graph input channels
};

struct Plan {
  int period = 0;
  int inputs = 0;
  std::uint32_t arena = 0;            ///< floats
  HostVector<std::uint32_t> outputs;  ///< arena offset of each graph output channel
  HostVector<dsp::MixJob> mix;
  HostVector<dsp::MixTerm> terms;
  HostVector<dsp::EqJob> eq;
  HostVector<dsp::GateJob> gate;
  HostVector<dsp::CompressorJob> compressor;
  HostVector<dsp::DelayJob> delay;
  std::vector<ConvolutionJob> convolution;
  std::vector<NamJob> nam;
  std::uint32_t eq_state = 0, gate_state = 0, compressor_state = 0, delay_state = 0;  ///< counts
  std::uint32_t ring = 0;     ///< floats of delay lines
  std::vector<Group> groups;  ///< in an order that respects deps
  int levels = 0;
  Params params;

  std::uint32_t jobs(Kind k) const;
};

}  // namespace sigpu::audio
