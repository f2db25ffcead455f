#include "audio/plan.hpp"

namespace sigpu::audio {

void Params::settle() {
  if (ramping[static_cast<int>(Kind::mix)]) {
    for (auto& g : gains) g.from = g.to;
  }
  if (ramping[static_cast<int>(Kind::eq)]) {
    for (auto& b : bands) {
      b.from = b.to;
      b.ramping = false;
    }
  }
  if (ramping[static_cast<int>(Kind::compressor)]) {
    for (auto& c : compressor) c.makeup.from = c.makeup.to;
  }
  if (ramping[static_cast<int>(Kind::delay)]) {
    for (auto& d : delay) d.from = d.to;
  }
  for (int k = 0; k < kKinds; ++k) {
    if (ramping[k]) dirty[k] = true;
    ramping[k] = false;
  }
}

std::uint32_t Plan::jobs(Kind k) const {
  switch (k) {
    case Kind::mix:
      return static_cast<std::uint32_t>(mix.size());
    case Kind::eq:
      return static_cast<std::uint32_t>(eq.size());
    case Kind::gate:
      return static_cast<std::uint32_t>(gate.size());
    case Kind::compressor:
      return static_cast<std::uint32_t>(compressor.size());
    case Kind::delay:
      return static_cast<std::uint32_t>(delay.size());
    case Kind::convolution:
      return static_cast<std::uint32_t>(convolution.size());
    case Kind::nam:
      return static_cast<std::uint32_t>(nam.size());
  }
  return 0;
}

}  // namespace sigpu::audio
