// CudaEngine's streaming path (DecodeOptions::device_memory_budget): a file of any size through
// a bounded amount of device memory. The host finds and indexes the frames (all cores); the
// index is cut into chunks of whole frames, so no frame ever straddles a chunk, each small
// enough for half the budget; two slots, each with its own stream and pinned buffers, take
// chunks in turn: while one slot's kernels run, the host fills the other's pinned input and its
// copy up runs, and a slot's PCM copy down overlaps the other's decode.
#include <algorithm>
#include <atomic>
#include <cstring>

#include "flac/cuda/decode_path.hpp"
#include "flac/cuda/decoder_impl.cuh"

namespace sigpu::flac {

using namespace sigpu::flac::cuda;
using sigpu::cuda::PinnedBuffer;

namespace cuda {
namespace {
std::atomic<std::uint64_t> last_streaming_bytes{0};
}
std::uint64_t streaming_device_bytes() {
  return last_streaming_bytes;
}
}  // namespace cuda

namespace {

constexpr unsigned kSlots = 2;
/// Bytes a chunk carries past its last frame: a damaged frame's decode may read on past its
/// end, and within this it fails exactly as in the whole-file path (beyond it, such a frame is
/// still reported damaged, possibly for another reason).
constexpr std::uint64_t kSlack = 256 << 10;

/// Frames [first, last) of an index, the bytes and samples they cover.
struct Chunk {
  std::size_t first = 0, last = 0;
  /// byte_begin 16-aligned: device reads need 4, the flat parse's ring 16 (FlatBits)
  std::uint64_t byte_begin = 0, byte_end = 0;
  std::uint64_t sample_begin = 0, sample_end = 0;
};

/// One slot's device buffers (DecodeSlot) and host staging.
struct StreamSlot {
  DecodeSlot* dev = nullptr;
  PinnedBuffer<std::uint8_t> in, out;
  PinnedBuffer<FrameEntry> frames;
  bool busy = false;
  Chunk chunk;
};

class StreamingExecutor : public FrameExecutor {
 public:
  StreamingExecutor(CudaEngine& impl, std::span<const std::uint8_t> file, const DecodeOptions& o,
                    Pcm& pcm)
      : impl_(impl), file_(file), o_(o), pcm_(pcm) {}

  void prepare_output(const FrameIndex& index) override {
    shape_pcm(pcm_, index, o_);
    const std::uint64_t bytes = output_bytes(index, o_.format, o_.max_output_bytes);
    pcm_.bytes.resize(bytes);
    ThreadPool::shared().parallel_for(bytes, [&](std::size_t b, std::size_t e) {
      std::memset(pcm_.bytes.data() + b, output_fill_byte(), e - b);
    });
  }

  FrameResults decode(const FrameIndex& index) override {
    results_ = {};
    index_ = &index;
    const std::vector<Chunk> chunks = plan(index);
    // Slot buffers grow to the largest chunk they served and keep that size: fresh ones here,
    // so what an earlier decode (another format, another file) left does not count against
    // this budget.
    impl_.stream_slots.resize(kSlots);
    for (unsigned i = 0; i < kSlots; ++i) {
      impl_.stream_slots[i] = std::make_unique<DecodeSlot>();
      slots_[i].dev = impl_.stream_slots[i].get();
    }
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      StreamSlot& slot = slots_[c % kSlots];
      if (slot.busy) finish(slot);
      start(slot, chunks[c]);
    }
    for (std::size_t c = chunks.size(); c < chunks.size() + kSlots; ++c)
      if (slots_[c % kSlots].busy) finish(slots_[c % kSlots]);
    std::uint64_t held = 0;
    for (const auto& s : slots_) held += s.dev->device_bytes();
    last_streaming_bytes = held;
    return std::move(results_);
  }

 private:
  unsigned scratch_bytes() const { return index_->bits_per_sample == 32 ? 8 : 4; }

  /// Per-slot caps on a chunk's compressed bytes, PCM and scratch bytes, and frame records.
  /// Each of a slot's buffers keeps the size of the largest chunk it served, and the largest
  /// of each kind may come from different chunks: so each kind has its own cap, the caps
  /// summing to the slot's share of the budget, split as the whole file splits its needs.
  struct Caps {
    std::uint64_t bytes, pcm, records;
  };
  std::uint64_t pcm_bytes(std::uint64_t samples) const {
    return samples * index_->channels * (scratch_bytes() + bytes_per_sample(o_.format));
  }
  static constexpr std::uint64_t kRecordBytes =
      sizeof(FrameEntry) + sizeof(FrameResultDevice) + sizeof(FrameStateDevice) +
      kMaxChannels * sizeof(SubframeParams) + kNarrowPerFrame * sizeof(NarrowException);
  /// Room DeviceBuffer adds past each of a slot's buffers, and a narrow parse's fixed needs.
  static constexpr std::uint64_t kPadding =
      16 * 16 + kNarrowFixed * sizeof(NarrowException) + 2 * sizeof(std::uint32_t);

  Caps caps(const FrameIndex& index) const {
    const std::uint64_t per_slot = o_.device_memory_budget / kSlots;
    const std::uint64_t room = per_slot > kSlack + kPadding ? per_slot - kSlack - kPadding : 0;
    const double b = double(file_.size()), p = double(pcm_bytes(index.total_samples)),
                 r = double(index.frames.size() * kRecordBytes), total = b + p + r;
    if (total <= 0) return {room, room, room};
    return {std::uint64_t(double(room) * b / total), std::uint64_t(double(room) * p / total),
            std::uint64_t(double(room) * r / total)};
  }

  std::vector<Chunk> plan(const FrameIndex& index) const {
    const Caps cap = caps(index);
    std::vector<Chunk> chunks;
    for (std::size_t k = 0; k < index.frames.size();) {
      Chunk c;
      c.first = k;
      c.byte_begin = index.frames[k].pos & ~std::uint64_t{15};
      c.sample_begin = index.frames[k].out_sample;
      do {
        const FrameEntry& f = index.frames[k];
        // Chunks own disjoint spans of the output, which needs frames in sample order (a
        // hostile stream can number its frames otherwise).
        if (k > 0 && f.out_sample < index.frames[k - 1].out_sample + index.frames[k - 1].block_size)
          throw Error("frame " + std::to_string(k) + " at byte " + std::to_string(f.pos) +
                      " overlaps the samples of the frame before it; such a stream cannot be "
                      "decoded within a device memory budget");
        const std::uint64_t end = std::max(c.byte_end, f.end);
        const std::uint64_t samples = std::max(c.sample_end, f.out_sample + f.block_size);
        // A chunk takes at least one frame, whatever the budget.
        if (k > c.first &&
            (end - c.byte_begin > cap.bytes || pcm_bytes(samples - c.sample_begin) > cap.pcm ||
             (k + 1 - c.first) * kRecordBytes > cap.records))
          break;
        c.byte_end = end;
        c.sample_end = samples;
        ++k;
      } while (k < index.frames.size());
      c.last = k;
      chunks.push_back(c);
    }
    return chunks;
  }

  void start(StreamSlot& slot, const Chunk& c) {
    ThreadPool& pool = ThreadPool::shared();
    DecodeSlot& dev = *slot.dev;
    const std::uint64_t bytes =
        std::min<std::uint64_t>(file_.size(), c.byte_end + kSlack) - c.byte_begin;
    const std::uint64_t samples = c.sample_end - c.sample_begin;
    const auto n = static_cast<std::uint32_t>(c.last - c.first);
    slot.in.reserve(bytes);
    pool.parallel_for(bytes, [&](std::size_t b, std::size_t e) {
      std::memcpy(slot.in.get() + b, file_.data() + c.byte_begin + b, e - b);
    });
    slot.frames.reserve(n);
    for (std::uint32_t j = 0; j < n; ++j) {
      FrameEntry f = index_->frames[c.first + j];
      f.pos -= c.byte_begin;
      f.end -= c.byte_begin;
      f.out_sample -= c.sample_begin;
      slot.frames.get()[j] = f;
    }
    dev.file.reserve(bytes);
    dev.frames.reserve(n);
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(dev.file.get(), slot.in.get(), bytes, cudaMemcpyHostToDevice, dev.s()));
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(dev.frames.get(), slot.frames.get(), n * sizeof(FrameEntry),
                                     cudaMemcpyHostToDevice, dev.s()));
    const std::uint64_t out_bytes = samples * index_->channels * bytes_per_sample(o_.format);
    dev.output.reserve(out_bytes);
    SIGPU_CUDA_CHECK(cudaMemsetAsync(dev.output.get(), output_fill_byte(), out_bytes, dev.s()));
    const PcmTarget target{dev.output.get(),        o_.format, o_.layout, index_->channels,
                           index_->bits_per_sample, samples};
    dev.launch(impl_.tables.get(), dev.file.get(), bytes, n, index_->bits_per_sample,
               index_->channels, samples, target, nullptr);
    slot.out.reserve(out_bytes);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.out.get(), dev.output.get(), out_bytes,
                                     cudaMemcpyDeviceToHost, dev.s()));
    slot.chunk = c;
    slot.busy = true;
  }

  /// Waits for a slot's chunk; its PCM goes to its place in the output, its results to theirs.
  void finish(StreamSlot& slot) {
    const Chunk& c = slot.chunk;
    const FrameResults r = slot.dev->collect();
    for (FrameFailure x : r.failed) {
      x.frame += static_cast<std::uint32_t>(c.first);
      results_.failed.push_back(x);
    }
    if (c.last == index_->frames.size())
      results_.last_end = r.last_end ? r.last_end + c.byte_begin : 0;
    const std::size_t value = bytes_per_sample(o_.format);
    const std::uint64_t samples = c.sample_end - c.sample_begin;
    const unsigned ch = index_->channels;
    ThreadPool& pool = ThreadPool::shared();
    if (o_.layout == Layout::interleaved) {
      const std::uint64_t bytes = samples * ch * value;
      std::uint8_t* dst = pcm_.bytes.data() + c.sample_begin * ch * value;
      pool.parallel_for(bytes, [&](std::size_t b, std::size_t e) {
        std::memcpy(dst + b, slot.out.get() + b, e - b);
      });
    } else {
      pool.parallel_for(ch, [&](std::size_t b, std::size_t e) {
        for (std::size_t k = b; k < e; ++k)
          std::memcpy(pcm_.bytes.data() + (k * pcm_.samples + c.sample_begin) * value,
                      slot.out.get() + k * samples * value, samples * value);
      });
    }
    slot.busy = false;
  }

  CudaEngine& impl_;
  std::span<const std::uint8_t> file_;
  const DecodeOptions& o_;
  Pcm& pcm_;
  const FrameIndex* index_ = nullptr;
  FrameResults results_;
  StreamSlot slots_[kSlots];
};

}  // namespace

DecodeOutput CudaEngine::decode_streaming(std::span<const std::uint8_t> file, const Stream& stream,
                                          const DecodeOptions& o) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  // The device search needs the whole file in device memory: here the host searches.
  std::vector<Candidate> cands = search_frames_cpu(file, stream, ThreadPool::shared());
  DecodeOutput r;
  StreamingExecutor executor(*this, file, o, r.pcm);
  ParallelDecodeResult pr = decode_in_rounds(cands, stream, o.params, file.size(), host_probe(file),
                                             executor, [file] { return file; });
  r.damage = std::move(pr.damage);
  r.warnings = std::move(pr.index.warnings);
  r.frames = pr.index.frames.size();
  r.frames_numbered = pr.index.frames_numbered;
  return r;
}

}  // namespace sigpu::flac
