// The CUDA ProRes decoder's driver: parses headers and slice tables on the host, packs a batch
// of frames with their slice descriptors into one pinned upload, runs the VLD and IDCT kernels
// on the decoder's stream and brings back the per-slice status (and, for host output, the
// frames).
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <sigpu/prores.hpp>

#include "core/cuda/buffer.hpp"
#include "core/thread_pool.hpp"
#include "prores/batch_pack.hpp"
#include "prores/cuda/kernels.cuh"
#include "prores/decode_cpu.hpp"
#include "prores/frame_parse.hpp"
#include "prores/tables.hpp"

namespace sigpu::prores {

namespace {

bool same_shape(const FrameShape& a, const FrameShape& b) {
  return a.width == b.width && a.height == b.height && a.chroma444 == b.chroma444 &&
         a.interlaced == b.interlaced && a.top_first == b.top_first &&
         a.alpha_bits == b.alpha_bits && a.bit_depth == b.bit_depth;
}

}  // namespace

// Events between the stages of a decode_device call: before the clearing memsets, before the
// VLD kernel, before the IDCT kernel, after it.
class StageEvents {
 public:
  StageEvents() {
    for (auto& e : events_) SIGPU_CUDA_CHECK(cudaEventCreate(&e));
  }
  ~StageEvents() {
    for (auto& e : events_) cudaEventDestroy(e);
  }
  StageEvents(const StageEvents&) = delete;
  StageEvents& operator=(const StageEvents&) = delete;
  void record(int i, cudaStream_t s) { SIGPU_CUDA_CHECK(cudaEventRecord(events_[i], s)); }
  /// Waits for the last event; the seconds between neighbouring events.
  CudaDecoder::StageSeconds elapsed() {
    SIGPU_CUDA_CHECK(cudaEventSynchronize(events_[3]));
    float ms[3] = {};
    for (int i = 0; i < 3; ++i)
      SIGPU_CUDA_CHECK(cudaEventElapsedTime(&ms[i], events_[i], events_[i + 1]));
    return {ms[0] / 1e3, ms[1] / 1e3, ms[2] / 1e3};
  }

 private:
  cudaEvent_t events_[4]{};
};

// One set of buffers and a stream; two of them let one chunk's transfers overlap another's
// kernels.
struct Slot {
  sigpu::cuda::Stream stream;
  sigpu::cuda::PinnedBuffer<std::uint8_t> h_upload;  // frame bytes, then descriptors
  sigpu::cuda::DeviceBuffer<std::uint8_t> d_upload;
  sigpu::cuda::DeviceBuffer<std::int16_t> d_coeffs;
  sigpu::cuda::DeviceBuffer<std::uint32_t> d_mb_info;
  sigpu::cuda::DeviceBuffer<std::uint16_t> d_out;
  sigpu::cuda::DeviceBuffer<std::uint8_t> d_status;
  sigpu::cuda::PinnedBuffer<std::uint8_t> h_status;
  // The chunk in flight, reported by finish().
  std::vector<ParsedFrame> parsed;
  std::vector<std::uint64_t> numbers;
  bool pending = false;
};

struct CudaDecoder::Impl {
  int device = 0;
  Slot slots[2];
  StageEvents stage_events;
  sigpu::cuda::PinnedBuffer<std::uint16_t> h_out;
  CudaDecoder::StageSeconds stage_seconds;

  explicit Impl(int dev) : device(dev) {}

  // Queues upload, decoding, the status download and (with host_dst) the frames' download
  // of one chunk of same-shape frames on the slot's stream.
  void enqueue(Slot& slot, std::span<const std::span<const std::uint8_t>> spans,
               std::uint16_t* host_dst, bool time_kernels) {
    const PackedBatch b = plan_batch(spans, slot.parsed);
    slot.h_upload.reserve(b.upload_size);
    slot.d_upload.reserve(b.upload_size);
    pack_batch(b, spans, slot.parsed, slot.h_upload.get());
    slot.d_coeffs.reserve(b.coeffs());
    slot.d_mb_info.reserve(b.mbs());
    slot.d_out.reserve(b.frames * b.frame_samples);
    slot.d_status.reserve(4 * b.total_slices);
    slot.h_status.reserve(4 * b.total_slices);

    cudaStream_t s = slot.stream.get();
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.d_upload.get(), slot.h_upload.get(), b.upload_size,
                                     cudaMemcpyHostToDevice, s));
    if (time_kernels) stage_events.record(0, s);
    SIGPU_CUDA_CHECK(cudaMemsetAsync(slot.d_coeffs.get(), 0, b.coeffs() * sizeof(std::int16_t), s));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(slot.d_mb_info.get(), 0, b.mbs() * sizeof(std::uint32_t), s));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(slot.d_status.get(), 0, 4 * b.total_slices, s));
    if (time_kernels) stage_events.record(1, s);

    const std::uint8_t* d = slot.d_upload.get();
    const VldParams vp{d,
                       reinterpret_cast<const SliceDesc*>(d + b.slices_at),
                       reinterpret_cast<const FrameDesc*>(d + b.frames_at),
                       static_cast<int>(b.total_slices),
                       b.layout,
                       slot.d_coeffs.get(),
                       slot.d_mb_info.get(),
                       slot.d_out.get(),
                       static_cast<std::int64_t>(b.frame_samples),
                       slot.d_status.get()};
    cuda::VldKernel<<<static_cast<unsigned>((b.vld_threads() + cuda::kVldThreads - 1) /
                                            cuda::kVldThreads),
                      cuda::kVldThreads, 0, s>>>(vp);
    SIGPU_CUDA_CHECK_LAUNCH();
    if (time_kernels) stage_events.record(2, s);

    const IdctParams ip{slot.d_coeffs.get(), slot.d_mb_info.get(),
                        vp.frames,           b.layout,
                        slot.d_out.get(),    static_cast<std::int64_t>(b.frame_samples)};
    const dim3 grid(static_cast<unsigned>(b.layout.tiles_per_frame()),
                    static_cast<unsigned>(b.frames));
    if (b.layout.shape.bit_depth == 10)
      cuda::IdctKernel<10><<<grid, cuda::kIdctThreads, 0, s>>>(ip);
    else
      cuda::IdctKernel<12><<<grid, cuda::kIdctThreads, 0, s>>>(ip);
    SIGPU_CUDA_CHECK_LAUNCH();
    if (time_kernels) {
      stage_events.record(3, s);
      stage_seconds = stage_events.elapsed();
    }

    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.h_status.get(), slot.d_status.get(), 4 * b.total_slices,
                                     cudaMemcpyDeviceToHost, s));
    if (host_dst)
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(host_dst, slot.d_out.get(),
                                       b.frames * b.frame_samples * sizeof(std::uint16_t),
                                       cudaMemcpyDeviceToHost, s));
    slot.pending = true;
  }

  // Waits for the slot's chunk and reports its damaged slices.
  void finish(Slot& slot, DecodeReport& report) {
    if (!slot.pending) return;
    slot.stream.synchronize();
    slot.pending = false;
    report_batch_status(slot.parsed, slot.numbers, slot.h_status.get(), report.damage);
    report.frames += slot.parsed.size();
  }

  // Parses a chunk into the slot; every frame must have the shape of `like` when given.
  void parse_into(Slot& slot, std::span<const std::span<const std::uint8_t>> spans, int bit_depth,
                  std::uint64_t first_number, const FrameShape* like) {
    slot.parsed.clear();
    slot.numbers.clear();
    for (std::size_t i = 0; i < spans.size(); ++i) {
      const std::uint64_t number = first_number + i;
      try {
        slot.parsed.push_back(parse_frame(spans[i], bit_depth));
      } catch (const Error& e) {
        throw Error("frame " + std::to_string(number) + ": " + e.what());
      }
      const FrameShape& ref = like ? *like : slot.parsed[0].shape;
      if (!same_shape(slot.parsed.back().shape, ref))
        throw Error("frame " + std::to_string(number) + " differs in shape from the batch's first");
      slot.numbers.push_back(number);
    }
  }

  BatchFrames describe(const ParsedFrame& pf, std::size_t count, const std::uint16_t* samples) {
    BatchFrames out;
    out.format = pf.format;
    out.width = pf.shape.width;
    out.height = pf.shape.height;
    out.scan = pf.header.scan;
    out.count = count;
    out.frame_samples = static_cast<std::size_t>(frame_samples(pf.shape));
    out.samples = samples;
    return out;
  }

  BatchFrames decode_host(std::span<const std::span<const std::uint8_t>> frames, int bit_depth,
                          DecodeReport& report, std::uint64_t first) {
    if (frames.empty()) return {};
    // Four chunks at least (overlap), at most 16 frames each (buffer sizes).
    const std::size_t chunk = std::clamp<std::size_t>((frames.size() + 3) / 4, 1, 16);
    std::optional<ParsedFrame> head;
    std::size_t frame_samples = 0;
    for (std::size_t c = 0, at = 0; at < frames.size(); ++c, at += chunk) {
      Slot& slot = slots[c & 1];
      finish(slot, report);
      const std::size_t n = std::min(chunk, frames.size() - at);
      parse_into(slot, frames.subspan(at, n), bit_depth, first + at, head ? &head->shape : nullptr);
      if (!head) {
        head = slot.parsed[0];
        frame_samples = static_cast<std::size_t>(prores::frame_samples(head->shape));
        finish(slots[1], report);
        h_out.reserve(frames.size() * frame_samples);
      }
      enqueue(slot, frames.subspan(at, n), h_out.get() + at * frame_samples, false);
    }
    finish(slots[0], report);
    finish(slots[1], report);
    return describe(*head, frames.size(), h_out.get());
  }
};

CudaDecoder::CudaDecoder(int device) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0)
    throw UnsupportedError("the cuda backend needs a CUDA device, and none is present");
  if (device < 0 || device >= count)
    throw Error("CUDA device " + std::to_string(device) + " does not exist");
  SIGPU_CUDA_CHECK(cudaSetDevice(device));
  impl_ = std::make_unique<Impl>(device);
  SIGPU_CUDA_CHECK(cudaMemcpyToSymbol(cuda::c_scan, kProgressiveScan, 64, 0));
  SIGPU_CUDA_CHECK(cudaMemcpyToSymbol(cuda::c_scan, kInterlacedScan, 64, 64));
}

CudaDecoder::~CudaDecoder() = default;
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;

CudaDecoder::StageSeconds CudaDecoder::last_kernel_seconds() const {
  return impl_->stage_seconds;
}

void CudaDecoder::download(const BatchFrames& frames, std::size_t i, std::uint16_t* dst) {
  if (i >= frames.count) throw Error("download: frame " + std::to_string(i) + " not in the batch");
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, frames.samples + i * frames.frame_samples,
                                   frames.frame_samples * sizeof(std::uint16_t),
                                   cudaMemcpyDeviceToHost, impl_->slots[0].stream.get()));
  impl_->slots[0].stream.synchronize();
}

BatchFrames CudaDecoder::decode_host(std::span<const std::span<const std::uint8_t>> frames,
                                     int bit_depth, DecodeReport& report,
                                     std::uint64_t first_frame_number) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  return impl_->decode_host(frames, bit_depth, report, first_frame_number);
}

BatchFrames CudaDecoder::decode_device(std::span<const std::span<const std::uint8_t>> frames,
                                       int bit_depth, DecodeReport& report,
                                       std::uint64_t first_frame_number) {
  if (frames.empty()) return {};
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  Slot& slot = impl_->slots[0];
  impl_->finish(impl_->slots[0], report);
  impl_->finish(impl_->slots[1], report);
  impl_->parse_into(slot, frames, bit_depth, first_frame_number, nullptr);
  impl_->enqueue(slot, frames, nullptr, true);
  impl_->finish(slot, report);
  return impl_->describe(slot.parsed[0], frames.size(), slot.d_out.get());
}

std::vector<Frame> CudaDecoder::decode(std::span<const std::span<const std::uint8_t>> frames,
                                       int bit_depth, DecodeReport& report,
                                       std::uint64_t first_frame_number) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  std::vector<Frame> out(frames.size());
  // Frames whose header is unusable are concealed like the CPU decoder does; the others go
  // to the GPU in runs of one shape.
  std::vector<std::optional<ParsedFrame>> parsed(frames.size());
  std::optional<ParsedFrame> shape_donor;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    try {
      parsed[i] = parse_frame(frames[i], bit_depth);
      if (!shape_donor) shape_donor = parsed[i];
    } catch (const Error& e) {
      report.damage.push_back({first_frame_number + i, 0, -1, 0, 0, e.what()});
    }
  }
  std::size_t i = 0;
  while (i < frames.size()) {
    if (!parsed[i]) {
      if (!shape_donor)
        throw Error("frame " + std::to_string(first_frame_number + i) +
                    ": no decodable frame in the batch to take its shape from");
      out[i] = concealed_frame(*shape_donor);
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < frames.size() && parsed[j] && same_shape(parsed[j]->shape, parsed[i]->shape)) ++j;
    const BatchFrames d =
        impl_->decode_host(frames.subspan(i, j - i), bit_depth, report, first_frame_number + i);
    for (std::size_t f = 0; f < d.count; ++f) out[i + f] = make_frame(*parsed[i + f]);
    ThreadPool::shared().parallel_for(d.count, [&](std::size_t b, std::size_t e) {
      for (std::size_t f = b; f < e; ++f)
        std::memcpy(out[i + f].samples.data(), d.samples + f * d.frame_samples,
                    d.frame_samples * sizeof(std::uint16_t));
    });
    i = j;
  }
  return out;
}

}  // namespace sigpu::prores
