#include "prores/decode_cpu.hpp"

#include <cstring>
#include <string>

#include "core/thread_pool.hpp"
#include "prores/slice.hpp"
#include "prores/tables.hpp"

namespace sigpu::prores {
namespace {

const char* kPlaneNames[4] = {"luma", "Cb", "Cr", "alpha"};

template <int BitDepth>
int decode_slice(std::span<const std::uint8_t> f, const ParsedFrame& pf, int picture,
                 const SliceGeometry& g, const SliceRef& ref, std::uint16_t* samples,
                 int& component) {
  const FrameShape& s = pf.shape;
  component = 0;
  SliceHeader h;
  if (int e = parse_slice_header(f.data() + ref.offset, static_cast<int>(ref.size), h); e) return e;
  std::int16_t qmat[2][64];
  for (int i = 0; i < 64; ++i) {
    qmat[0][i] = scaled_quant(pf.header.luma_matrix[i], h.qscale);
    qmat[1][i] = scaled_quant(pf.header.chroma_matrix[i], h.qscale);
  }
  const std::uint8_t* scan = s.interlaced ? kInterlacedScan : kProgressiveScan;
  alignas(32) std::int16_t coeffs[32 * 64];
  std::size_t pos = ref.offset + static_cast<std::size_t>(h.header_size);
  for (int p = 0; p < 3; ++p) {
    component = p;
    if (p == 1 && h.size[1] + h.size[2] == 0) {
      fill_slice(samples, s, picture, g, 1, no_chroma_value(BitDepth));
      fill_slice(samples, s, picture, g, 2, no_chroma_value(BitDepth));
      break;
    }
    const int log2_blocks = g.log2_mbs + log2_blocks_per_mb(p, s.chroma444);
    const int blocks = 1 << log2_blocks;
    std::memset(coeffs, 0, sizeof(std::int16_t) * 64 * blocks);
    const std::size_t end = pos + static_cast<std::size_t>(h.size[p]);
    if (int e =
            decode_component(f.data(), pos, end, log2_blocks,
                             [&](int b, int i, std::int16_t v) { coeffs[64 * b + scan[i]] = v; });
        e)
      return e;
    const PlaneView v = plane_view(samples, s, p, picture);
    for (int b = 0; b < blocks; ++b) {
      idct_block<BitDepth>(coeffs + 64 * b, qmat[p ? 1 : 0]);
      int x, y;
      block_origin(p, s.chroma444, g.mb_x, g.mb_y, b, x, y);
      put_block<BitDepth>(coeffs + 64 * b, v, x, y);
    }
    pos = end;
  }
  if (s.alpha_bits) {
    component = 3;
    const std::size_t begin =
        ref.offset + static_cast<std::size_t>(h.header_size) + h.size[0] + h.size[1] + h.size[2];
    if (h.size[3] > 0)
      decode_slice_alpha(f.data(), begin, begin + h.size[3], samples, s, picture, g);
    else  // no alpha coded: opaque (FFmpeg leaves the plane unwritten)
      fill_slice(samples, s, picture, g, 3, static_cast<std::uint16_t>((1u << BitDepth) - 1));
  }
  return kVldOk;
}

}  // namespace

Frame make_frame(const ParsedFrame& pf) {
  Frame out;
  out.format = pf.format;
  out.width = pf.shape.width;
  out.height = pf.shape.height;
  out.scan = pf.header.scan;
  out.samples.resize(static_cast<std::size_t>(frame_samples(pf.shape)));
  return out;
}

Frame concealed_frame(const ParsedFrame& pf) {
  Frame f = make_frame(pf);
  for (int s = 0; s < static_cast<int>(pf.slices.size()); ++s) {
    int pic, idx;
    locate_slice(pf, s, pic, idx);
    conceal_slice(f.samples.data(), pf.shape, pic,
                  slice_geometry(idx, pf.shape.mb_width, pf.picture[pic].log2_slice_mbs));
  }
  return f;
}

void locate_slice(const ParsedFrame& pf, int i, int& picture, int& index) {
  picture = pf.pictures == 2 && i >= pf.picture[1].first_slice ? 1 : 0;
  index = i - pf.picture[picture].first_slice;
}

void report_slice_errors(const ParsedFrame& pf, std::span<const int> errors,
                         std::span<const int> components, std::uint64_t frame_number,
                         std::vector<Damage>& damage) {
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (!errors[i]) continue;
    int pic, idx;
    locate_slice(pf, static_cast<int>(i), pic, idx);
    const SliceGeometry g = slice_geometry(idx, pf.shape.mb_width, pf.picture[pic].log2_slice_mbs);
    Damage d;
    d.frame = frame_number;
    d.picture = pic;
    d.slice = idx;
    d.mb_x = g.mb_x;
    d.mb_y = g.mb_y;
    d.what = vld_error_name(errors[i]);
    if (errors[i] == kVldBadCodeword || errors[i] == kVldCoeffOverrun)
      d.what = std::string(kPlaneNames[components[i] & 3]) + ": " + d.what;
    damage.push_back(std::move(d));
  }
}

void decode_slices_cpu(std::span<const std::uint8_t> f, const ParsedFrame& pf,
                       std::uint16_t* samples, bool parallel, std::uint64_t frame_number,
                       std::vector<Damage>& damage) {
  const int n = static_cast<int>(pf.slices.size());
  std::vector<int> errors(n, 0), components(n, 0);
  auto run = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      int pic, idx;
      locate_slice(pf, static_cast<int>(i), pic, idx);
      const SliceGeometry g =
          slice_geometry(idx, pf.shape.mb_width, pf.picture[pic].log2_slice_mbs);
      const SliceRef& ref = pf.slices[i];
      int e = ref.error;
      if (!e)
        e = pf.shape.bit_depth == 10 ? decode_slice<10>(f, pf, pic, g, ref, samples, components[i])
                                     : decode_slice<12>(f, pf, pic, g, ref, samples, components[i]);
      if (e) {
        errors[i] = e;
        conceal_slice(samples, pf.shape, pic, g);
      }
    }
  };
  if (parallel)
    ThreadPool::shared().parallel_for(static_cast<std::size_t>(n), run, 16);
  else
    run(0, static_cast<std::size_t>(n));
  report_slice_errors(pf, errors, components, frame_number, damage);
}

}  // namespace sigpu::prores
