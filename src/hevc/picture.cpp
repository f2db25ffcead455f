#include "hevc/picture.hpp"

namespace sigpu::hevc {

void DecodedPicture::allocate(std::shared_ptr<const Sps> s, std::shared_ptr<const Pps> p) {
  sps = std::move(s);
  pps = std::move(p);
  const int planes_n = sps->chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < 3; ++c) {
    width[c] = c == 0 ? sps->width : (planes_n == 3 ? sps->width / 2 : 0);
    height[c] = c == 0 ? sps->height : (planes_n == 3 ? sps->height / 2 : 0);
    planes[c].assign(
        static_cast<std::size_t>(width[c]) * height[c],
        static_cast<std::uint16_t>(1 << ((c ? sps->bit_depth_chroma : sps->bit_depth_luma) - 1)));
  }
  blocks_w = (sps->width + 3) / 4;
  blocks_h = (sps->height + 3) / 4;
  const std::size_t nb = static_cast<std::size_t>(blocks_w) * blocks_h;
  intra_mode.assign(nb, 1);
  ct_depth.assign(nb, 0);
  pcm.assign(nb, 0);
  const int ctbs = sps->width_ctbs() * sps->height_ctbs();
  ctb_slice_addr.assign(static_cast<std::size_t>(ctbs), -1);
  decoded_ctbs = 0;
  damaged = false;

  info = {};
  info.width = sps->width;
  info.height = sps->height;
  info.bit_depth_luma = sps->bit_depth_luma;
  info.bit_depth_chroma = sps->bit_depth_chroma;
  info.chroma_format_idc = sps->chroma_format_idc;
  info.log2_ctb_size = sps->log2_ctb;
  info.cb_qp_offset = pps->cb_qp_offset;
  info.cr_qp_offset = pps->cr_qp_offset;
  info.sao = sps->sao;
  info.deblocking = true;
  info.filter_across_tiles = pps->loop_filter_across_tiles;
  info.blocks.assign(nb, {});
  info.sao_params.assign(sps->sao ? static_cast<std::size_t>(ctbs) : 0, {});
  info.ctb_tile.assign(static_cast<std::size_t>(ctbs), 0);
  info.ctb_slice.assign(static_cast<std::size_t>(ctbs), 0);
  const auto& g = *pps->geometry;
  for (int rs = 0; rs < ctbs; ++rs)
    info.ctb_tile[rs] = static_cast<std::uint16_t>(g.tile_id[g.rs_to_ts[rs]]);
}

}  // namespace sigpu::hevc
