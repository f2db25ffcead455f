#include "audio/effects/mix/matrix.hpp"

namespace sigpu::audio::effects {

void MatrixEffect::setup(Plan& plan, const NodeIo& io) {
  auto& d = plan.data<MixKind>();
  gain_base_ = static_cast<std::uint32_t>(d.params.size());
  d.params.resize(gain_base_ + entries_.size());
  std::size_t e = 0;
  for (int o = 0; o < outputs_; ++o) {
    dsp::MixJob job{io.out[o], static_cast<std::uint32_t>(d.aux.size()), 0};
    for (; e < entries_.size() && entries_[e].out == o; ++e) {
      d.aux.push_back({io.in[entries_[e].in], gain_base_ + static_cast<std::uint32_t>(e)});
    }
    job.term_end = static_cast<std::uint32_t>(d.aux.size());
    d.jobs.push_back(job);
  }
  write(d, false);
}

void MatrixEffect::write(MixKind::Data& d, bool ramp) const {
  for (std::size_t e = 0; e < entries_.size(); ++e) {
    auto& g = d.params[gain_base_ + e];
    g.to = static_cast<float>(entries_[e].weight * master_);
    if (!ramp) g.from = g.to;
  }
  d.touch(ramp);
}

}  // namespace sigpu::audio::effects
