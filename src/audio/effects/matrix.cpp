#include "audio/effects/matrix.hpp"

namespace sigpu::audio::effects {

void MatrixEffect::setup(Plan& plan, const NodeIo& io) {
  gain_base_ = static_cast<std::uint32_t>(plan.params.gains.size());
  plan.params.gains.resize(gain_base_ + entries_.size());
  std::size_t e = 0;
  for (int o = 0; o < outputs_; ++o) {
    dsp::MixJob job{io.out[o], static_cast<std::uint32_t>(plan.terms.size()), 0};
    for (; e < entries_.size() && entries_[e].out == o; ++e) {
      plan.terms.push_back({io.in[entries_[e].in], gain_base_ + static_cast<std::uint32_t>(e)});
    }
    job.term_end = static_cast<std::uint32_t>(plan.terms.size());
    plan.mix.push_back(job);
  }
  write(plan.params, false);
}

void MatrixEffect::write(Params& params, bool ramp) const {
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    auto& g = params.gains[gain_base_ + e];
    g.to = static_cast<float>(entries_[e].weight * master_);
    if (!ramp) g.from = g.to;
  }
  params.touch(Kind::mix, ramp);
}

}  // namespace sigpu::audio::effects
