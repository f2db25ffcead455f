#include "prores/batch_pack.hpp"

#include <cstring>

#include "prores/decode_cpu.hpp"

namespace sigpu::prores {
namespace {

std::size_t align16(std::size_t n) {
  return (n + 15) & ~std::size_t{15};
}

}  // namespace

PackedBatch plan_batch(std::span<const std::span<const std::uint8_t>> spans,
                       std::span<const ParsedFrame> parsed) {
  PackedBatch b;
  b.frames = parsed.size();
  if (b.frames > 65535) throw Error("a CUDA batch holds at most 65535 frames");
  b.layout.shape = parsed[0].shape;
  b.layout.pictures = parsed[0].pictures;
  b.layout.planes = b.layout.shape.alpha_bits ? 4 : 3;
  b.frame_samples = static_cast<std::size_t>(frame_samples(b.layout.shape));
  std::size_t bytes = 0;
  b.frame_at.resize(b.frames);
  for (std::size_t i = 0; i < b.frames; ++i) {
    b.frame_at[i] = bytes;
    bytes = align16(bytes + spans[i].size());
    b.total_slices += parsed[i].slices.size();
  }
  if (bytes >= (std::size_t{1} << 32)) throw Error("CUDA batch over 4 GiB of coded frames");
  b.slices_at = bytes;
  b.frames_at = align16(b.slices_at + b.total_slices * sizeof(SliceDesc));
  b.upload_size = b.frames_at + b.frames * sizeof(FrameDesc);
  if (b.vld_threads() >= (std::size_t{1} << 31)) throw Error("CUDA batch has too many slices");
  return b;
}

void pack_batch(const PackedBatch& b, std::span<const std::span<const std::uint8_t>> spans,
                std::span<const ParsedFrame> parsed, std::uint8_t* upload) {
  auto* sd = reinterpret_cast<SliceDesc*>(upload + b.slices_at);
  auto* fd = reinterpret_cast<FrameDesc*>(upload + b.frames_at);
  std::size_t k = 0;
  for (std::size_t i = 0; i < b.frames; ++i) {
    std::memcpy(upload + b.frame_at[i], spans[i].data(), spans[i].size());
    const ParsedFrame& pf = parsed[i];
    for (int s = 0; s < static_cast<int>(pf.slices.size()); ++s, ++k) {
      int pic, idx;
      locate_slice(pf, s, pic, idx);
      const SliceRef& r = pf.slices[s];
      sd[k] = {static_cast<std::uint32_t>(b.frame_at[i] + r.offset),
               r.size,
               static_cast<std::uint32_t>(idx),
               static_cast<std::uint16_t>(i),
               static_cast<std::uint8_t>(pic),
               static_cast<std::uint8_t>(r.error)};
    }
    fd[i].log2_slice_mbs[0] = pf.picture[0].log2_slice_mbs;
    fd[i].log2_slice_mbs[1] = pf.picture[1].log2_slice_mbs;
    std::memcpy(fd[i].qmat[0], pf.header.luma_matrix.data(), 64);
    std::memcpy(fd[i].qmat[1], pf.header.chroma_matrix.data(), 64);
  }
}

void report_batch_status(std::span<const ParsedFrame> parsed,
                         std::span<const std::uint64_t> numbers, const std::uint8_t* status,
                         std::vector<Damage>& damage) {
  std::size_t k = 0;
  for (std::size_t i = 0; i < parsed.size(); ++i) {
    const std::size_t count = parsed[i].slices.size();
    std::vector<int> errors(count), comps(count);
    for (std::size_t j = 0; j < count; ++j, ++k)
      for (int c = 0; c < 4; ++c)
        if (status[4 * k + c] && !errors[j]) {
          errors[j] = status[4 * k + c];
          comps[j] = c;
        }
    report_slice_errors(parsed[i], errors, comps, numbers[i], damage);
  }
}

}  // namespace sigpu::prores
