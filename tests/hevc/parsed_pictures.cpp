#include "hevc/parsed_pictures.hpp"

#include <span>
#include <utility>

#include "hevc/errors.hpp"
#include "hevc/nal.hpp"
#include "hevc/plane_pool.hpp"
#include "hevc/slice_decoder.hpp"
#include "hevc/wpp_rows.hpp"

namespace sigpu::hevc::testing {

std::unique_ptr<Parsed> parse_pictures(const std::vector<std::uint8_t>& bytes, std::size_t count,
                                       std::size_t cut_last_slice, bool by_rows) {
  auto out = std::make_unique<Parsed>();
  std::vector<std::vector<NalUnit>> slices;
  for (const NalSpan& s : split_annexb(bytes)) {
    NalUnit nal = parse_nal(std::span(bytes).subspan(s.begin, s.end - s.begin));
    if (nal.type == 33) {
      out->sps = std::make_shared<Sps>();
      parse_sps(nal.rbsp, *out->sps);
    } else if (nal.type == 34) {
      out->pps = std::make_shared<Pps>();
      parse_pps(nal.rbsp, *out->pps);
    } else if (nal.type < 32) {
      if (nal.rbsp[0] & 0x80) {  // first_slice_segment_in_pic_flag
        if (slices.size() == count) break;
        slices.emplace_back();
      }
      if (!slices.empty()) slices.back().push_back(std::move(nal));
    }
  }
  if (!out->sps || !out->pps || slices.size() != count) return nullptr;
  if (cut_last_slice) {
    auto& r = slices.back().back().rbsp;
    r.resize(r.size() > cut_last_slice ? r.size() - cut_last_slice : 1);
  }
  out->pps->geometry = derive_geometry(*out->pps, *out->sps);
  out->pps->geometry_sps = out->sps.get();
  const Pps* pps_table[64] = {};
  const Sps* sps_table[16] = {};
  pps_table[out->pps->id] = out->pps.get();
  sps_table[out->sps->id] = out->sps.get();
  for (const auto& picture : slices) {
    auto pic = std::make_shared<DecodedPicture>();
    pic->start(out->sps, out->pps);
    pic->allocate(
        PooledStore(new PlaneStore(DecodedPicture::samples(*out->sps), Memory::pageable)));
    PictureParseState state;
    SliceHeader independent;
    RefPicLists refs;
    int slice_index = -1;
    out->headers.emplace_back();
    for (const NalUnit& nal : picture) {
      try {
        const SliceHeader sh = parse_slice_header(nal, pps_table, sps_table, &independent);
        if (!sh.dependent) {
          independent = sh;
          ++slice_index;
          out->headers.back().push_back(sh);
          pic->info.slices.emplace_back();
          pic->poc = sh.poc_lsb;
          for (int l = 0; l < 2; ++l) {
            refs.size[l] = sh.slice_type == 2 ? 0 : sh.num_ref_idx[l];
            for (int i = 0; i < refs.size[l]; ++i) refs.pic[l][i] = out->pics.front();
          }
        }
        const RefPicLists* lists = sh.slice_type == 2 ? nullptr : &refs;
        if (by_rows && picture.size() == 1 && wpp_rows_possible(*pic, sh)) {
          WorkQueue scheduler(4);
          parse_wpp_rows(*pic, sh, nal, slice_index, lists, false, scheduler);
        } else {
          SliceDecoder(*pic, sh, slice_index, state, lists).decode(nal);
        }
      } catch (const DecodeError&) {
        ++out->failed_slices;
      }
    }
    out->pics.push_back(std::move(pic));
  }
  return out;
}

}  // namespace sigpu::hevc::testing
