// sigpu HEVC in-loop filters: deblocking and sample adaptive offset (H.265 8.7.2 and 8.7.3),
// on the CPU and on the GPU, over a decoded picture and the side information a decoder front
// end records while it reconstructs it.
//
// The side information is kept on a 4x4 luma grid, the smallest transform and prediction block
// size, so one layout serves intra and inter pictures: the front end fills PictureInfo, the
// filters derive boundary strengths, QPs and every edge decision from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::hevc_filter {

/// Bits of BlockInfo::flags.
enum BlockFlag : std::uint8_t {
  kIntra = 1 << 0,       ///< the coding unit is intra predicted
  kCodedLuma = 1 << 1,   ///< the luma transform block holding this 4x4 has non-zero coefficients
  kNoFilter = 1 << 2,    ///< pcm with pcm_loop_filter_disabled, or cu_transquant_bypass: samples
                         ///< left untouched by deblocking and SAO
  kLeftTuEdge = 1 << 3,  ///< the left edge of this 4x4 is a transform block edge
  kLeftPuEdge = 1 << 4,  ///< ... a prediction block edge
  kTopTuEdge = 1 << 5,   ///< the top edge is a transform block edge
  kTopPuEdge = 1 << 6,   ///< ... a prediction block edge
};

/// Bits of BlockInfo::deblock: filterEdgeFlag for this block's left and top edges (8.7.2.3),
/// zero at picture edges, at slice and tile edges the slice/PPS flags close, and in slices with
/// slice_deblocking_filter_disabled_flag.
enum DeblockEdge : std::uint8_t {
  kFilterLeft = 1 << 0,
  kFilterTop = 1 << 1,
};

/// One 4x4 luma block.
struct BlockInfo {
  std::uint8_t flags = 0;    ///< BlockFlag bits
  std::uint8_t deblock = 0;  ///< DeblockEdge bits
  std::int8_t qp_y = 0;      ///< QpY of the coding unit (-QpBdOffsetY..51)
};

/// Motion of one 4x4 block, for the inter boundary-strength rules (8.7.2.4). Intra pictures leave
/// PictureInfo::motion empty.
struct Motion {
  std::int16_t mv[2][2] = {};      ///< [list][x, y] in quarter samples
  std::int32_t ref[2] = {-1, -1};  ///< identity of the reference picture per list (e.g. its
                                   ///< POC or buffer id); -1 when the list is not used
};

/// Per-slice parameters the filters read (taken from the slice segment header and the PPS).
struct SliceParams {
  std::int8_t beta_offset_div2 = 0;
  std::int8_t tc_offset_div2 = 0;
  bool sao_luma = false;             ///< slice_sao_luma_flag
  bool sao_chroma = false;           ///< slice_sao_chroma_flag
  bool filter_across_slices = true;  ///< slice_loop_filter_across_slices_enabled_flag
};

/// SAO parameters of one CTB (7.4.9.3), one set per component (Y, Cb, Cr).
struct SaoParams {
  std::uint8_t type[3] = {};           ///< 0 not applied, 1 band offset, 2 edge offset
  std::uint8_t band_position[3] = {};  ///< sao_band_position
  std::uint8_t eo_class[3] = {};       ///< sao_eo_class: 0 horizontal, 1 vertical, 2 135°, 3 45°
  std::int16_t offset[3][4] = {};      ///< SaoOffsetVal[1..4], sign applied and scaled by
                                       ///< << (bitDepth - Min(bitDepth, 10))
};

/// Everything the filters need to know about one picture.
struct PictureInfo {
  int width = 0, height = 0;  ///< luma samples
  int bit_depth_luma = 8, bit_depth_chroma = 8;
  int chroma_format_idc = 1;  ///< 0 monochrome, 1 4:2:0 (4:2:2 and 4:4:4 are refused for now)
  int log2_ctb_size = 4;      ///< 4..6
  int cb_qp_offset = 0, cr_qp_offset = 0;  ///< pps_cb_qp_offset, pps_cr_qp_offset
  bool deblocking = true;                  ///< false: skip deblocking for the whole picture
  bool sao = false;                        ///< sample_adaptive_offset_enabled_flag
  bool filter_across_tiles = true;         ///< loop_filter_across_tiles_enabled_flag

  std::vector<BlockInfo> blocks;      ///< ceil(width/4) x ceil(height/4), row-major
  std::vector<Motion> motion;         ///< same grid, or empty (intra picture)
  std::vector<SliceParams> slices;    ///< one per slice (not per slice segment: dependent segments
                                      ///< belong to their slice), in decoding order, so that a
                                      ///< lower index is an earlier slice (SAO's rule in 8.7.3)
  std::vector<SaoParams> sao_params;  ///< one per CTB, raster order (when sao)
  std::vector<std::uint16_t> ctb_tile;   ///< tile index per CTB, raster order (empty: one tile)
  std::vector<std::uint16_t> ctb_slice;  ///< index into slices per CTB, raster order (slices
                                         ///< hold whole CTBs, so this places every sample;
                                         ///< empty: every CTB is in slices[0])
};

/// The three sample planes of a picture (Y, Cb, Cr; only Y when monochrome). Samples are
/// uint16_t for every bit depth (8 to 12): one code path, no templates at the API, and the
/// front end's reconstruction writes them directly. Strides are in samples, not bytes; the
/// chroma planes of 4:2:0 are width/2 x height/2.
struct Planes {
  std::uint16_t* data[3] = {};
  std::ptrdiff_t stride[3] = {};
};

/// Checks that the side information is complete and consistent (sizes of every vector, bit
/// depths 8..12, chroma format 0 or 1, width and height multiples of 8, CTB size, QPs in range,
/// slice and tile indices in range, SAO parameters in range); throws Error naming the first
/// field that is wrong. Every filter entry point calls it first.
void validate(const PictureInfo& info);

/// Deblocks, then applies SAO, in place on host planes: `cpu` is the serial reference,
/// `cpu_parallel` uses ThreadPool::shared(); `cuda` runs a CudaFilter on device 0 (made for
/// this call: a decoder should hold its own CudaFilter); `automatic` is resolve()'s choice. All
/// backends are bit-identical.
void filter_picture(const PictureInfo& info, const Planes& planes, Backend backend = Backend::cpu);

/// The GPU filters: deblocking in one launch over 8x8 boundary blocks (each filters its
/// vertical edge, then its horizontal edge, exactly), SAO in a second launch from the deblocked
/// copy, per-CTB parameters packed on the host. Device buffers grow when the picture grows and
/// are kept between pictures. One instance per decoder; not thread-safe; all work runs on one
/// CUDA stream, the instance's own or one the caller gives.
class CudaFilter {
 public:
  /// Throws Error when built without CUDA or no device. `stream` (a cudaStream_t) is the stream
  /// to queue the work on, behind the caller's work on it; null: a stream of the filter's own.
  explicit CudaFilter(int device = 0, void* stream = nullptr);
  ~CudaFilter();
  CudaFilter(CudaFilter&&) noexcept;
  CudaFilter& operator=(CudaFilter&&) noexcept;

  /// Host planes: uploads them and the side information, filters, downloads; returns when the
  /// planes hold the filtered picture.
  void filter(const PictureInfo& info, const Planes& host);

  /// Device-resident planes (device pointers, strides in samples): copies the side
  /// information into pinned staging, then enqueues its upload and both kernels on stream() and
  /// returns at once, so the caller can parse the next picture while the GPU filters this one.
  /// `info` may be changed or freed as soon as this returns; the planes are final after
  /// synchronize() (or after later work on stream()). = upload(info) then run(device).
  void filter_device(const PictureInfo& info, const Planes& device);

  /// filter_device with its copy into pinned memory made beforehand by the caller, on any
  /// thread (a decoder: the thread that parsed the picture, so that the thread queueing GPU work
  /// does not copy megabytes per picture). stage() checks `info` (throws Error as filter does)
  /// and writes staged_bytes(info) bytes at `pinned` (page-locked host memory, e.g.
  /// cudaMallocHost's), what it checked included; filter_staged() then queues their upload and
  /// both kernels on stream() and returns. It trusts those bytes: they must be stage()'s, and
  /// stay as they are until the work is done.
  static std::size_t staged_bytes(const PictureInfo& info);
  static void stage(const PictureInfo& info, void* pinned);
  void filter_staged(const void* pinned, const Planes& device);

  /// The two halves of filter_device, for callers that time them apart (the benchmark).
  void upload(const PictureInfo& info);
  void run(const Planes& device);

  /// Waits for everything enqueued on stream().
  void synchronize();
  /// The cudaStream_t the filters run on (as void*, so this header needs no CUDA).
  void* stream() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::hevc_filter
