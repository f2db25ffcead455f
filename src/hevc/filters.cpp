#include "hevc/filters.hpp"

#include "hevc/errors.hpp"

#ifdef SIGPU_HEVC_FILTERS
#include <sigpu/hevc_filter.hpp>
#endif

namespace sigpu::hevc {

#ifdef SIGPU_HEVC_FILTERS
struct FilterRunner::Cuda {
  hevc_filter::CudaFilter filter{0};
};

bool filters_available() {
  return true;
}

void FilterRunner::apply(DecodedPicture& pic, Backend backend) {
  hevc_filter::Planes planes;
  const int comps = pic.sps->chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    planes.data[c] = pic.planes[c].data();
    planes.stride[c] = pic.width[c];
  }
  if (resolve(backend) == Backend::cuda) {
    if (!cuda_) cuda_ = std::make_unique<Cuda>();
    cuda_->filter.filter(pic.info, planes);
    return;
  }
  hevc_filter::filter_picture(pic.info, planes, backend);
}
#else
struct FilterRunner::Cuda {};

bool filters_available() {
  return false;
}

void FilterRunner::apply(DecodedPicture&, Backend) {
  throw Unsupported("in-loop filters: this build has no hevc_filter module");
}
#endif

FilterRunner::FilterRunner() = default;
FilterRunner::~FilterRunner() = default;

}  // namespace sigpu::hevc
