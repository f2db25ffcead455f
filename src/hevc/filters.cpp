#include "hevc/filters.hpp"

#include "hevc/errors.hpp"

#ifdef SIGPU_HEVC_FILTERS
#include <sigpu/hevc_filter.hpp>
#endif

namespace sigpu::hevc {

#ifdef SIGPU_HEVC_FILTERS
struct FilterRunner::Cuda {
  explicit Cuda(void* stream = nullptr) : filter(0, stream) {}
  hevc_filter::CudaFilter filter;
};

bool filters_available() {
  return true;
}

namespace {

hevc_filter::Planes planes_of(const DecodedPicture& pic, bool work) {
  hevc_filter::Planes planes;
  const int comps = pic.sps->chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    planes.data[c] = work ? pic.work_planes[c] : pic.planes[c].data();
    planes.stride[c] = pic.width[c];
  }
  return planes;
}

}  // namespace

void FilterRunner::apply(DecodedPicture& pic, Backend backend) {
  const hevc_filter::Planes planes = planes_of(pic, false);
  if (resolve(backend) == Backend::cuda) {
    if (!cuda_) cuda_ = std::make_unique<Cuda>();
    cuda_->filter.filter(pic.info, planes);
    return;
  }
  hevc_filter::filter_picture(pic.info, planes, backend);
}

void FilterRunner::apply_work(DecodedPicture& pic, Backend backend, void* stream,
                              const void* staged) {
  const hevc_filter::Planes planes = planes_of(pic, true);
  if (resolve(backend) != Backend::cuda) {
    hevc_filter::filter_picture(pic.info, planes, backend);
    return;
  }
  if (!cuda_) cuda_ = std::make_unique<Cuda>(stream);
  if (staged)
    cuda_->filter.filter_staged(staged, planes);
  else
    cuda_->filter.filter_device(pic.info, planes);
}

std::size_t filter_side_bytes(const DecodedPicture& pic) {
  return hevc_filter::CudaFilter::staged_bytes(pic.info);
}

void stage_filter_side(const DecodedPicture& pic, void* pinned) {
  hevc_filter::CudaFilter::stage(pic.info, pinned);
}
#else
struct FilterRunner::Cuda {};

bool filters_available() {
  return false;
}

void FilterRunner::apply(DecodedPicture&, Backend) {
  throw Unsupported("in-loop filters: this build has no hevc_filter module");
}

void FilterRunner::apply_work(DecodedPicture&, Backend, void*, const void*) {
  throw Unsupported("in-loop filters: this build has no hevc_filter module");
}

std::size_t filter_side_bytes(const DecodedPicture&) {
  return 0;
}

void stage_filter_side(const DecodedPicture&, void*) {}
#endif

FilterRunner::FilterRunner() = default;
FilterRunner::~FilterRunner() = default;

}  // namespace sigpu::hevc
