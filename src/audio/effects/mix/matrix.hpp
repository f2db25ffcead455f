// Gain, pan, mixer and router: each output channel is a weighted sum of input channels
// (mix.hpp). This base holds the non-zero weights; the effects differ in how their parameters
// make them.
#pragma once

#include <vector>

#include "audio/effect.hpp"

namespace sigpu::audio::effects {

class MatrixEffect : public Effect {
 public:
  Kind kind() const override { return kind_of<MixKind>(); }
  void setup(Plan& plan, const NodeIo& io) override;

 protected:
  struct Entry {
    int out = 0, in = 0;
    double weight = 1;  ///< times master_
  };
  /// Writes the current weights into the plan's gains, ramped from the old ones when `ramp`.
  void write(MixKind::Data& d, bool ramp) const;

  std::vector<Entry> entries_;  ///< sorted by output channel
  int outputs_ = 0;
  double master_ = 1;

 private:
  std::uint32_t gain_base_ = 0;
};

}  // namespace sigpu::audio::effects
