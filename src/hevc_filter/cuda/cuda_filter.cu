// CudaFilter: side information staged in pinned memory and uploaded in one copy, then the
// deblocking launch and the SAO launch on the instance's stream (kernels.cuh holds the kernels).
#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "core/cuda/buffer.hpp"
#include "hevc_filter/cuda/kernels.cuh"
#include "hevc_filter/picture.hpp"

namespace sigpu::hevc_filter {

namespace {

constexpr std::size_t align_up(std::size_t n) {
  return (n + 255) & ~std::size_t(255);
}

dim3 to_dim3(cuda::Shape s) {
  return dim3(s.x, s.y, s.z);
}

/// CTBs of a picture of `info`'s size, from its fields alone (make_geometry's count once they
/// are valid; for sizing only before they are checked).
std::size_t ctb_count(const PictureInfo& info) {
  const int ctb = 1 << std::clamp(info.log2_ctb_size, 4, 6);
  const auto across = [ctb](int n) { return std::size_t(std::max(n, 0) + ctb - 1) / ctb; };
  return across(info.width) * across(info.height);
}

/// Where the side information's parts go in the staging and device buffers: blocks | motion |
/// ctbs, each 256-byte aligned, so that one copy moves them.
struct SideLayout {
  std::size_t blocks_bytes = 0, motion_bytes = 0, ctbs_bytes = 0;
  std::size_t motion_at = 0, ctbs_at = 0, total = 0;

  SideLayout() = default;
  explicit SideLayout(const PictureInfo& info)
      : blocks_bytes(info.blocks.size() * sizeof(BlockInfo)),
        motion_bytes(info.motion.size() * sizeof(Motion)),
        ctbs_bytes(ctb_count(info) * sizeof(CtbParams)),
        motion_at(align_up(blocks_bytes)),
        ctbs_at(motion_at + align_up(motion_bytes)),
        total(ctbs_at + ctbs_bytes) {}

  void fill(const PictureInfo& info, const Geometry& g, std::uint8_t* to) const {
    const std::vector<CtbParams> ctbs = make_ctb_params(info, g);
    std::memcpy(to, info.blocks.data(), blocks_bytes);
    if (motion_bytes) std::memcpy(to + motion_at, info.motion.data(), motion_bytes);
    std::memcpy(to + ctbs_at, ctbs.data(), ctbs_bytes);
  }
};

/// What stage() checked, ahead of the side information it staged: filter_staged() reads it
/// instead of checking the picture again.
struct StagedHeader {
  Geometry g;
  SideLayout layout;
  bool intra = true;
};
constexpr std::size_t kHeaderBytes = align_up(sizeof(StagedHeader));
static_assert(std::is_trivially_copyable_v<StagedHeader>);

}  // namespace

struct CudaFilter::Impl {
  int device = 0;
  sigpu::cuda::Stream stream;
  // Both events block the waiting thread instead of spinning (cudaEventBlockingSync): a
  // decoder drives several filters from threads of their own, and a thread spinning in a wait
  // takes a core from the CPU work beside it (the default schedule spins with one context).
  cudaEvent_t staged{};  ///< the last upload has left the pinned staging buffer
  cudaEvent_t done{};    ///< filter(): the planes are back on the host
  Geometry g;
  bool uploaded = false;
  bool intra = true;  ///< no motion in the side information
  // blocks | motion | ctbs, each 256-byte aligned, in one buffer so one copy moves them.
  sigpu::cuda::PinnedBuffer<std::uint8_t> staging;
  sigpu::cuda::DeviceBuffer<std::uint8_t> side;
  std::size_t motion_at = 0, ctbs_at = 0;
  sigpu::cuda::DeviceBuffer<std::uint16_t> scratch;  ///< the deblocked picture SAO reads
  sigpu::cuda::DeviceBuffer<std::uint16_t> planes;   ///< filter(): the host planes' copy

  Impl(int dev, void* given) : device(dev), stream(given) {
    constexpr unsigned flags = cudaEventDisableTiming | cudaEventBlockingSync;
    SIGPU_CUDA_CHECK(cudaEventCreateWithFlags(&staged, flags));
    SIGPU_CUDA_CHECK(cudaEventCreateWithFlags(&done, flags));
  }
  ~Impl() {
    cudaEventDestroy(staged);
    cudaEventDestroy(done);
  }

  /// Queues the copy of a picture's staged side information (`total` bytes at `from`, pinned).
  void copy_up(bool no_motion, const SideLayout& l, const std::uint8_t* from) {
    intra = no_motion;
    motion_at = l.motion_at;
    ctbs_at = l.ctbs_at;
    side.reserve(l.total);
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(side.get(), from, l.total, cudaMemcpyHostToDevice, stream.get()));
    uploaded = true;
  }

  void upload(const PictureInfo& info) {
    g = make_geometry(info);
    const SideLayout l(info);
    // The previous picture's upload may still be reading the staging buffer.
    SIGPU_CUDA_CHECK(cudaEventSynchronize(staged));
    staging.reserve(l.total);
    l.fill(info, g, staging.get());
    copy_up(info.motion.empty(), l, staging.get());
    SIGPU_CUDA_CHECK(cudaEventRecord(staged, stream.get()));
  }

  void upload_staged(const void* pinned) {
    StagedHeader h;
    std::memcpy(&h, pinned, sizeof h);
    g = h.g;
    copy_up(h.intra, h.layout, static_cast<const std::uint8_t*>(pinned) + kHeaderBytes);
  }

  /// The scratch picture: planes packed, rows padded to 8 samples (16 bytes) for the SAO
  /// kernel's vector loads.
  Planes scratch_planes() {
    Planes p;
    std::size_t offset = 0;
    for (int c = 0; c < g.planes; ++c) {
      p.stride[c] = cuda::scratch_stride(g.plane_width(c));
      offset += std::size_t(p.stride[c]) * g.plane_height(c);
    }
    scratch.reserve(offset);
    offset = 0;
    for (int c = 0; c < g.planes; ++c) {
      p.data[c] = scratch.get() + offset;
      offset += std::size_t(p.stride[c]) * g.plane_height(c);
    }
    return p;
  }

  void run(const Planes& d) {
    if (!uploaded) throw Error("hevc_filter: CudaFilter::run before upload");
    check_planes(g, d, "hevc_filter::CudaFilter");
    const SideInfo s{reinterpret_cast<const BlockInfo*>(side.get()),
                     intra ? nullptr : reinterpret_cast<const Motion*>(side.get() + motion_at),
                     reinterpret_cast<const CtbParams*>(side.get() + ctbs_at)};
    cudaStream_t st = stream.get();
    const dim3 grid = to_dim3(cuda::deblock_grid(g)), block = to_dim3(cuda::kDeblockBlock);
    const bool vec = cuda::aligned8(d, g.planes);
    if (!g.sao) {
      if (g.deblocking) {
        cuda::deblock_kernel<<<grid, block, 0, st>>>(g, s, d, d, vec, vec);
        SIGPU_CUDA_CHECK_LAUNCH();
      }
      return;
    }
    const Planes tmp = scratch_planes();
    if (g.deblocking) {
      cuda::deblock_kernel<<<grid, block, 0, st>>>(g, s, d, tmp, vec, true);
      SIGPU_CUDA_CHECK_LAUNCH();
    } else {
      for (int c = 0; c < g.planes; ++c)
        SIGPU_CUDA_CHECK(cudaMemcpy2DAsync(tmp.data[c], tmp.stride[c] * 2, d.data[c],
                                           d.stride[c] * 2, g.plane_width(c) * 2, g.plane_height(c),
                                           cudaMemcpyDeviceToDevice, st));
    }
    cuda::sao_kernel<<<to_dim3(cuda::sao_grid(g)), to_dim3(cuda::kSaoBlock), 0, st>>>(g, s, tmp, d);
    SIGPU_CUDA_CHECK_LAUNCH();
  }

  void filter_host(const PictureInfo& info, const Planes& host) {
    upload(info);
    check_planes(g, host, "hevc_filter::CudaFilter::filter");
    std::size_t total = 0;
    for (int c = 0; c < g.planes; ++c) total += std::size_t(g.plane_width(c)) * g.plane_height(c);
    planes.reserve(total);
    Planes d;
    std::size_t offset = 0;
    cudaStream_t st = stream.get();
    for (int c = 0; c < g.planes; ++c) {
      const int w = g.plane_width(c), h = g.plane_height(c);
      d.data[c] = planes.get() + offset;
      d.stride[c] = w;
      offset += std::size_t(w) * h;
      SIGPU_CUDA_CHECK(cudaMemcpy2DAsync(d.data[c], w * 2, host.data[c], host.stride[c] * 2, w * 2,
                                         h, cudaMemcpyHostToDevice, st));
    }
    run(d);
    for (int c = 0; c < g.planes; ++c)
      SIGPU_CUDA_CHECK(cudaMemcpy2DAsync(host.data[c], host.stride[c] * 2, d.data[c],
                                         d.stride[c] * 2, g.plane_width(c) * 2, g.plane_height(c),
                                         cudaMemcpyDeviceToHost, st));
    SIGPU_CUDA_CHECK(cudaEventRecord(done, st));
    SIGPU_CUDA_CHECK(cudaEventSynchronize(done));
  }
};

CudaFilter::CudaFilter(int device, void* stream) {
  const auto devices = cuda_devices();
  if (device < 0 || device >= static_cast<int>(devices.size()))
    throw UnsupportedError("hevc_filter: CUDA device " + std::to_string(device) +
                           " is not available (" + std::to_string(devices.size()) +
                           " device(s) visible)");
  SIGPU_CUDA_CHECK(cudaSetDevice(device));
  impl_ = std::make_unique<Impl>(device, stream);
}
CudaFilter::~CudaFilter() = default;
CudaFilter::CudaFilter(CudaFilter&&) noexcept = default;
CudaFilter& CudaFilter::operator=(CudaFilter&&) noexcept = default;

void CudaFilter::filter(const PictureInfo& info, const Planes& host) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->filter_host(info, host);
}

void CudaFilter::filter_device(const PictureInfo& info, const Planes& device) {
  upload(info);
  run(device);
}

std::size_t CudaFilter::staged_bytes(const PictureInfo& info) {
  return kHeaderBytes + SideLayout(info).total;
}

void CudaFilter::stage(const PictureInfo& info, void* pinned) {
  const StagedHeader h{make_geometry(info), SideLayout(info), info.motion.empty()};
  auto* to = static_cast<std::uint8_t*>(pinned);
  std::memcpy(to, &h, sizeof h);
  h.layout.fill(info, h.g, to + kHeaderBytes);
}

void CudaFilter::filter_staged(const void* pinned, const Planes& device) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->upload_staged(pinned);
  impl_->run(device);
}

void CudaFilter::upload(const PictureInfo& info) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->upload(info);
}

void CudaFilter::run(const Planes& device) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->run(device);
}

void CudaFilter::synchronize() {
  impl_->stream.synchronize();
}

void* CudaFilter::stream() const {
  return impl_->stream.get();
}

}  // namespace sigpu::hevc_filter
