// filter_picture: the CPU backends (serial reference and thread pool) over host planes, and the
// way to the CUDA filter for callers that hold no CudaFilter.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "core/thread_pool.hpp"
#include "hevc_filter/cpu_filter.hpp"
#include "hevc_filter/picture.hpp"

namespace sigpu::hevc_filter {

void validate(const PictureInfo& info) {
  make_geometry(info);
}

void check_planes(const Geometry& g, const Planes& p, const char* where) {
  for (int c = 0; c < g.planes; ++c)
    if (!p.data[c] || p.stride[c] < g.plane_width(c))
      throw Error(std::string(where) + ": plane " + std::to_string(c) +
                  (p.data[c] ? " has a stride smaller than its width" : " is null"));
}

void filter_picture(const PictureInfo& info, const Planes& planes, Backend backend) {
  backend = resolve(backend);
  if (backend == Backend::cuda) {
    CudaFilter(0).filter(info, planes);
    return;
  }
  const Geometry g = make_geometry(info);
  check_planes(g, planes, "hevc_filter::filter_picture");
  const std::vector<CtbParams> ctbs = make_ctb_params(info, g);
  const SideInfo s{info.blocks.data(), info.motion.empty() ? nullptr : info.motion.data(),
                   ctbs.data()};
  // Runs fn(i) for i in [0, n): in order on this thread, or spread over the shared pool.
  auto each = [&](int n, const std::function<void(int)>& fn) {
    if (backend == Backend::cpu) {
      for (int i = 0; i < n; ++i) fn(i);
      return;
    }
    ThreadPool::shared().parallel_for(std::size_t(n), [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) fn(int(i));
    });
  };
  if (g.deblocking) {
    each(edge_rows(g), [&](int j) { deblock_vertical_unit(g, s, planes, j); });
    each(edge_rows(g), [&](int j) { deblock_horizontal_unit(g, s, planes, j); });
  }
  if (!g.sao) return;
  // SAO reads deblocked neighbours, never its own output: it works from a copy.
  std::vector<std::uint16_t> copy[3];
  for (int c = 0; c < g.planes; ++c) {
    const int w = g.plane_width(c), h = g.plane_height(c);
    copy[c].resize(std::size_t(w) * h);
    each(h, [&](int y) {
      std::memcpy(copy[c].data() + std::size_t(y) * w, planes.data[c] + y * planes.stride[c],
                  std::size_t(w) * 2);
    });
  }
  each(g.ctbs_h * g.planes, [&](int i) {
    const int c = i % g.planes, row = i / g.planes;
    sao_ctb_row(g, s, c, copy[c].data(), g.plane_width(c), planes.data[c], planes.stride[c], row);
  });
}

}  // namespace sigpu::hevc_filter
