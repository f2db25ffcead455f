// The assembly stage of reconstruction from records (docs/design/hevc.md, "The record
// pipeline"): what joins the inter and residual stages' outputs before intra prediction. Each
// coded transform block of an inter coding unit gets its residual added to the prediction
// (clipped to the bit depth, as the CPU reconstruction's add_residual), each PCM coding unit's
// samples are copied in, and each CTB the parse did not finish is filled with mid-grey (the
// concealment of DecodedPicture::conceal_missing_ctbs). The jobs are independent: written
// once for host and device, one job per CUDA thread block (cuda/assemble_kernel.cuh), the CPU
// twin running the same job body on one thread.
#pragma once

#include <cstdint>
#include <vector>

#include "core/hd.hpp"
#include "hevc/inter_sample.hpp"
#include "hevc/records.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

/// The jobs of one picture: indices of inter transform blocks (coded, not intra), of PCM coding
/// units, then raster addresses of CTBs to conceal; a job's kind follows from its position.
struct AssembleOrder {
  std::vector<std::uint32_t> jobs;
  std::uint32_t tus = 0, pcms = 0;  ///< jobs[0, tus) and jobs[tus, tus + pcms); CTBs after
};

/// The jobs of `rec` in a picture whose CTBs are marked in ctb_done (raster order).
void order_assembly(const PictureRecords& rec, const std::vector<std::uint8_t>& ctb_done,
                    AssembleOrder& out);

/// Picture-wide parameters.
struct AssembleParams {
  int bit_depth[2] = {8, 8};
  int planes = 3;  ///< 1 in 4:0:0
  int width[3] = {}, height[3] = {};
  int log2_ctb = 4;
  int ctbs_wide = 1;
};

/// What a job reads: the record fields it needs (host or device memory) and the residual.
struct AssembleArgs {
  const std::uint16_t *tu_x, *tu_y;
  const std::uint8_t *tu_log2, *tu_comp;
  const std::uint16_t *cu_x, *cu_y;
  const std::uint8_t* cu_log2;
  const std::uint32_t* cu_pcm_begin;
  const std::uint16_t* pcm;
  const std::uint32_t* jobs;
  std::uint32_t tus, pcms;
  AssembleParams params;
  ResidualPlanes residual;
  InterPlanes out;
};

/// Job j's samples k0, k0 + step, k0 + 2 step, ... (one thread's share of the job).
SIGPU_HD inline void assemble_job(const AssembleArgs& a, std::uint32_t j, int k0, int step) {
  const std::uint32_t i = a.jobs[j];
  if (j < a.tus) {
    const int c = a.tu_comp[i], log2 = a.tu_log2[i], n = 1 << log2;
    const int max_val = (1 << a.params.bit_depth[c ? 1 : 0]) - 1;
    const std::int16_t* r = a.residual.data[c] + a.tu_y[i] * a.residual.stride[c] + a.tu_x[i];
    std::uint16_t* d = a.out.data[c] + a.tu_y[i] * a.out.stride[c] + a.tu_x[i];
    for (int k = k0; k < n * n; k += step) {
      const int x = k & (n - 1), y = k >> log2;
      const int v = d[y * a.out.stride[c] + x] + r[y * a.residual.stride[c] + x];
      d[y * a.out.stride[c] + x] = static_cast<std::uint16_t>(v < 0         ? 0
                                                              : v > max_val ? max_val
                                                                            : v);
    }
    return;
  }
  if (j < a.tus + a.pcms) {
    // Y n x n, then Cb and Cr (n/2)^2 each in 4:2:0, rows in order.
    const int n = 1 << a.cu_log2[i], luma = n * n;
    const int total = a.params.planes == 1 ? luma : luma + luma / 2;
    const std::uint16_t* s = a.pcm + a.cu_pcm_begin[i];
    for (int k = k0; k < total; k += step) {
      const int c = k < luma ? 0 : (k - luma) < luma / 4 ? 1 : 2;
      const int m = c ? n / 2 : n, o = c ? k - luma - (c - 1) * (luma / 4) : k;
      const int x = (a.cu_x[i] >> (c ? 1 : 0)) + o % m, y = (a.cu_y[i] >> (c ? 1 : 0)) + o / m;
      a.out.data[c][y * a.out.stride[c] + x] = s[k];
    }
    return;
  }
  const int l = a.params.log2_ctb;
  const int x0 = static_cast<int>(i % static_cast<std::uint32_t>(a.params.ctbs_wide)) << l;
  const int y0 = static_cast<int>(i / static_cast<std::uint32_t>(a.params.ctbs_wide)) << l;
  for (int c = 0; c < a.params.planes; ++c) {
    const int sh = c ? 1 : 0, size = (1 << l) >> sh;
    const auto grey = static_cast<std::uint16_t>(1 << (a.params.bit_depth[c ? 1 : 0] - 1));
    for (int k = k0; k < size * size; k += step) {
      const int x = (x0 >> sh) + k % size, y = (y0 >> sh) + k / size;
      if (x < a.params.width[c] && y < a.params.height[c])
        a.out.data[c][y * a.out.stride[c] + x] = grey;
    }
  }
}

/// The record fields of `rec` as AssembleArgs (host memory), with `order`'s jobs.
AssembleArgs assemble_args(const PictureRecords& rec, const AssembleOrder& order,
                           const AssembleParams& p, const ResidualPlanes& residual,
                           const InterPlanes& out);

/// The CPU twin: every job of `order`, one after another.
void assemble_stage_cpu(const PictureRecords& rec, const AssembleOrder& order,
                        const AssembleParams& p, const ResidualPlanes& residual,
                        const InterPlanes& out);

}  // namespace sigpu::hevc
