// A picture for the filter tests: side information plus its three planes, packed at their widths.
#pragma once

#include <cstdint>
#include <vector>

#include <sigpu/hevc_filter.hpp>

namespace sigpu::test {

struct TestPicture {
  hevc_filter::PictureInfo info;
  std::vector<std::uint16_t> samples[3];

  int plane_width(int c) const { return c ? info.width / 2 : info.width; }
  std::uint16_t& at(int c, int x, int y) { return samples[c][std::size_t(y) * plane_width(c) + x]; }
  hevc_filter::BlockInfo& block(int x, int y) {
    return info.blocks[std::size_t(y / 4) * (info.width / 4) + x / 4];
  }
  hevc_filter::Planes planes() {
    hevc_filter::Planes p;
    for (int c = 0; c < 3; ++c) {
      if (samples[c].empty()) continue;
      p.data[c] = samples[c].data();
      p.stride[c] = plane_width(c);
    }
    return p;
  }
};

}  // namespace sigpu::test
