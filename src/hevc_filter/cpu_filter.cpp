// CPU drivers of the deblocking filter and SAO over host planes (see cpu_filter.hpp).
#include "hevc_filter/cpu_filter.hpp"

#include "hevc_filter/deblock.hpp"
#include "hevc_filter/sao.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define SIGPU_SAO_AVX2 1
#endif

namespace sigpu::hevc_filter {

namespace {

#ifdef SIGPU_SAO_AVX2
/// Sign(v - w) of samples below 2^15, each comparison giving 0 or -1.
[[gnu::target("avx2")]] inline __m256i sign16(__m256i v, __m256i w) {
  return _mm256_sub_epi16(_mm256_cmpgt_epi16(w, v), _mm256_cmpgt_epi16(v, w));
}

// edgeIdx (2 + Sign(v - a) + Sign(v - b), 0..4) picks its offset with one byte shuffle from the
// table {o1, o2, 0, o3, o4}.
[[gnu::target("avx2")]] int sao_edge_row_avx2(const std::uint16_t* in, const std::uint16_t* a,
                                              const std::uint16_t* b, std::uint16_t* out, int n,
                                              std::uint32_t offsets, int bit_depth) {
  const auto o = [&](int k) { return static_cast<char>(sao_unpack(offsets, k)); };
  const __m128i lane = _mm_setr_epi8(o(0), o(1), 0, o(2), o(3), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m256i table = _mm256_broadcastsi128_si256(lane);
  const __m256i two = _mm256_set1_epi16(2), high_zero = _mm256_set1_epi16(short(0x8000));
  const __m256i zero = _mm256_setzero_si256(), top = _mm256_set1_epi16(short((1 << bit_depth) - 1));
  int x = 0;
  for (; x + 16 <= n; x += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + x));
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + x));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + x));
    const __m256i e = _mm256_add_epi16(two, _mm256_add_epi16(sign16(v, va), sign16(v, vb)));
    // The low byte of each lane indexes the table; the high byte's set top bit zeroes it.
    const __m256i picked = _mm256_shuffle_epi8(table, _mm256_or_si256(e, high_zero));
    const __m256i add = _mm256_srai_epi16(_mm256_slli_epi16(picked, 8), 8);
    const __m256i r = _mm256_min_epi16(_mm256_max_epi16(_mm256_add_epi16(v, add), zero), top);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x), r);
  }
  return x;
}
#endif

/// Filters one 4-line luma segment whose line 0 has q0 at `q0`.
void luma_segment(std::uint16_t* q0, std::ptrdiff_t across, std::ptrdiff_t along,
                  const EdgeParams& e, int max_value) {
  const LumaDecision d = decide_luma(q0, across, along, e.beta, e.tc);
  if (d.mode == 0) return;
  for (int k = 0; k < 4; ++k) filter_luma_line(q0 + k * along, across, d, e, max_value);
}

void chroma_segment(std::uint16_t* q0, std::ptrdiff_t across, std::ptrdiff_t along,
                    const EdgeParams& e, int max_value) {
  for (int k = 0; k < 4; ++k) filter_chroma_line(q0 + k * along, across, e, max_value);
}

}  // namespace

void deblock_vertical_unit(const Geometry& g, const SideInfo& s, const Planes& p, int j) {
  const std::ptrdiff_t ys = p.stride[0];
  const int ymax = (1 << g.bit_depth[0]) - 1;
  for (int half = 0; half < 2; ++half) {
    const int by = 2 * j + half;
    for (int x = 8; x < g.width; x += 8) {
      const EdgeParams e = segment_params(g, s, 0, x / 4, by, true);
      if (e.tc) luma_segment(p.data[0] + by * 4 * ys + x, 1, ys, e, ymax);
    }
  }
  for (int c = 1; c < g.planes; ++c) {
    const std::ptrdiff_t cs = p.stride[c];
    const int cmax = (1 << g.depth(c)) - 1;
    for (int x = 8; x < g.plane_width(c); x += 8) {
      const EdgeParams e = segment_params(g, s, c, x / 2, 2 * j, true);
      if (e.tc) chroma_segment(p.data[c] + 4 * j * cs + x, 1, cs, e, cmax);
    }
  }
}

void deblock_horizontal_unit(const Geometry& g, const SideInfo& s, const Planes& p, int j) {
  if (j == 0) return;
  const std::ptrdiff_t ys = p.stride[0];
  const int ymax = (1 << g.bit_depth[0]) - 1;
  for (int x = 0; x < g.width; x += 4) {
    const EdgeParams e = segment_params(g, s, 0, x / 4, 2 * j, false);
    if (e.tc) luma_segment(p.data[0] + 8 * j * ys + x, ys, 1, e, ymax);
  }
  if (j % 2) return;
  for (int c = 1; c < g.planes; ++c) {
    const std::ptrdiff_t cs = p.stride[c];
    const int cmax = (1 << g.depth(c)) - 1;
    for (int x = 0; x < g.plane_width(c); x += 4) {
      const EdgeParams e = segment_params(g, s, c, x / 2, 2 * j, false);
      if (e.tc) chroma_segment(p.data[c] + 4 * j * cs + x, cs, 1, e, cmax);
    }
  }
}

void sao_ctb_row(const Geometry& g, const SideInfo& s, int c, const std::uint16_t* src,
                 std::ptrdiff_t src_stride, std::uint16_t* dst, std::ptrdiff_t dst_stride,
                 int row) {
  const int sh = Geometry::shift(c);
  const int size = (1 << g.log2_ctb) >> sh;
  const int w = g.plane_width(c), h = g.plane_height(c), bd = g.depth(c);
  const int y0 = row * size, y1 = y0 + size < h ? y0 + size : h;
  for (int col = 0; col < g.ctbs_w; ++col) {
    const CtbParams& ctb = s.ctbs[row * g.ctbs_w + col];
    const int type = ctb.sao_type[c];
    if (!type) continue;
    const int x0 = col * size, x1 = x0 + size < w ? x0 + size : w;
    const std::uint32_t offsets = sao_pack(ctb.sao_offset[c]);
    if (type == 1) {
      for (int y = y0; y < y1; ++y)
        for (int x = x0; x < x1; ++x)
          if (!sao_exempt(g, s, ctb, c, x, y))
            dst[y * dst_stride + x] =
                std::uint16_t(sao_band(src[y * src_stride + x], ctb.sao_arg[c], offsets, bd));
      continue;
    }
    int dx = 0, dy = 0;
    sao_edge_neighbours(ctb.sao_arg[c], dx, dy);
    // Any sample: its neighbours are fetched only where they exist; sao_edge_sample then checks
    // picture, slice and tile boundaries.
    auto any_sample = [&](int x, int y) {
      const int xa = x + dx, ya = y + dy, xb = x - dx, yb = y - dy;
      if (xa < 0 || xb < 0 || xa >= w || xb >= w || ya < 0 || yb < 0 || ya >= h || yb >= h) return;
      if (sao_exempt(g, s, ctb, c, x, y)) return;
      dst[y * dst_stride + x] =
          std::uint16_t(sao_edge_sample(g, ctb, c, col, row, x, y, dx, dy, src[y * src_stride + x],
                                        src[ya * src_stride + xa], src[yb * src_stride + xb]));
    };
    for (int y = y0; y < y1; ++y) {
      if (ctb.no_filter || x1 - x0 < 3) {
        for (int x = x0; x < x1; ++x) any_sample(x, y);
        continue;
      }
      any_sample(x0, y);
      any_sample(x1 - 1, y);
      // Inner columns: both neighbours sit in this CTB's column, so the rows above and below
      // decide for all of them at once.
      if (!sao_neighbour_usable(g, ctb, col, row, (x0 + 1) << sh, (y + dy) << sh) ||
          !sao_neighbour_usable(g, ctb, col, row, (x0 + 1) << sh, (y - dy) << sh))
        continue;
      const std::uint16_t* in = src + y * src_stride;
      const std::uint16_t* a = src + (y + dy) * src_stride + dx;
      const std::uint16_t* b = src + (y - dy) * src_stride - dx;
      std::uint16_t* out = dst + y * dst_stride;
      sao_edge_row(in + x0 + 1, a + x0 + 1, b + x0 + 1, out + x0 + 1, x1 - x0 - 2, offsets, bd);
    }
  }
}

void sao_edge_row(const std::uint16_t* in, const std::uint16_t* a, const std::uint16_t* b,
                  std::uint16_t* out, int n, std::uint32_t offsets, int bit_depth) {
  int x = 0;
#ifdef SIGPU_SAO_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && bit_depth <= 15) x = sao_edge_row_avx2(in, a, b, out, n, offsets, bit_depth);
#endif
  for (; x < n; ++x) out[x] = std::uint16_t(sao_edge(in[x], a[x], b[x], offsets, bit_depth));
}

}  // namespace sigpu::hevc_filter
