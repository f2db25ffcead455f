#include "hevc/record_pipeline.hpp"

#include <algorithm>
#include <cstring>

#include "hevc/errors.hpp"
#include "hevc/filters.hpp"
#include "hevc/inter_stage.hpp"
#include "hevc/record_plan.hpp"
#include "hevc/residual_stage.hpp"

namespace sigpu::hevc {

void RecordPlan::make(const RecordWork& w) {
  const DecodedPicture& pic = *w.pic;
  const Sps& sps = *pic.sps;
  const int planes = sps.chroma_format_idc == 0 ? 1 : 3;
  // Each reference picture once, in the order the slices name them.
  std::vector<const DecodedPicture*> ref_pics;
  slices.assign(w.slices.size(), InterSlice{});
  for (std::size_t i = 0; i < w.slices.size(); ++i) {
    const RecordSlice& s = w.slices[i];
    std::int8_t ref[2][16];
    std::memset(ref, -1, sizeof ref);
    if (s.refs)
      for (int l = 0; l < 2; ++l)
        for (int k = 0; k < s.refs->size[l]; ++k) {
          const DecodedPicture* p = s.refs->pic[l][k].get();
          if (!p || !p->work_planes[0]) continue;
          auto it = std::find(ref_pics.begin(), ref_pics.end(), p);
          if (it == ref_pics.end()) it = ref_pics.insert(ref_pics.end(), p);
          ref[l][k] = static_cast<std::int8_t>(it - ref_pics.begin());
        }
    if (s.header)
      slices[i] = inter_slice(*s.header, ref);
    else
      std::memset(slices[i].ref, -1, sizeof slices[i].ref);
  }
  refs.assign(ref_pics.size(), RefPicture{});
  for (std::size_t k = 0; k < ref_pics.size(); ++k)
    for (int c = 0; c < planes; ++c)
      refs[k].plane[c] = {ref_pics[k]->work_planes[c], ref_pics[k]->width[c], ref_pics[k]->width[c],
                          ref_pics[k]->height[c]};
  inter = {};
  inter.bit_depth[0] = sps.bit_depth_luma;
  inter.bit_depth[1] = sps.bit_depth_chroma;
  inter.chroma_format = sps.chroma_format_idc;
  check_inter_records(pic.records.pu, slices, static_cast<int>(refs.size()), sps.width, sps.height,
                      inter);
  residual = residual_params(sps, *pic.pps, scaling);
  order_assembly(pic.records, pic.ctb_done, assembly);
  intra_params = {};
  intra_params.bit_depth[0] = sps.bit_depth_luma;
  intra_params.bit_depth[1] = sps.bit_depth_chroma;
  intra_params.filter_refs = !sps.intra_smoothing_disabled;
  intra_params.strong_smoothing = sps.strong_intra_smoothing;
  intra_params.chroma_format = sps.chroma_format_idc;
  order_intra_tus(pic.records.tu, sps.width, sps.height, intra_params, intra);
  assemble = assemble_params(pic);
  work = work_view(pic);
}

AssembleParams assemble_params(const DecodedPicture& pic) {
  const Sps& sps = *pic.sps;
  AssembleParams p;
  p.bit_depth[0] = sps.bit_depth_luma;
  p.bit_depth[1] = sps.bit_depth_chroma;
  p.planes = sps.chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < 3; ++c) {
    p.width[c] = pic.width[c];
    p.height[c] = pic.height[c];
  }
  p.log2_ctb = sps.log2_ctb;
  p.ctbs_wide = sps.width_ctbs();
  return p;
}

InterPlanes work_view(const DecodedPicture& pic) {
  InterPlanes out;
  for (int c = 0; c < 3 && !pic.planes[c].empty(); ++c) {
    out.data[c] = pic.work_planes[c];
    out.stride[c] = pic.width[c];
  }
  return out;
}

ResidualPlanes residual_planes(const DecodedPicture& pic, std::int16_t* storage) {
  ResidualPlanes res;
  std::size_t at = 0;
  for (int c = 0; c < 3 && !pic.planes[c].empty(); ++c) {
    res.data[c] = storage + at;
    res.stride[c] = pic.width[c];
    at += pic.planes[c].size();
  }
  return res;
}

namespace {

// The stages' CPU twins, one picture at a time on the calling thread.
class CpuRecordPipeline final : public RecordPipeline {
 public:
  Memory memory() const override { return Memory::pageable; }

  std::function<void()> run(const RecordWork& w, const RecordPlan& plan) override {
    DecodedPicture& pic = *w.pic;
    const std::size_t samples = DecodedPicture::samples(*pic.sps);
    if (w.reconstructed) {
      std::copy_n(pic.store->data(), samples, pic.work_store->data());
    } else {
      residual_.resize(samples);
      const ResidualPlanes res = residual_planes(pic, residual_.data());
      inter_stage_cpu(pic.records.pu, plan.slices, plan.refs, plan.inter, plan.work);
      residual_stage_cpu(pic.records, plan.residual, res);
      assemble_stage_cpu(pic.records, plan.assembly, plan.assemble, res, plan.work);
      intra_stage_cpu(pic.records.tu, plan.intra, plan.intra_params, res, plan.work);
    }
    if (w.filter) filters_.apply_work(pic, Backend::cpu);
    if (w.output) std::copy_n(pic.work_store->data(), samples, pic.store->data());
    return [] {};
  }

  void grey(DecodedPicture& pic) override {
    for (int c = 0; c < 3 && !pic.planes[c].empty(); ++c)
      std::fill_n(pic.work_planes[c], pic.planes[c].size(),
                  static_cast<std::uint16_t>(
                      1 << ((c ? pic.sps->bit_depth_chroma : pic.sps->bit_depth_luma) - 1)));
  }

 private:
  std::vector<std::int16_t> residual_;
  FilterRunner filters_;
};

}  // namespace

std::unique_ptr<RecordPipeline> make_record_pipeline(Backend backend) {
  if (resolve(backend) == Backend::cuda) return make_cuda_record_pipeline();
  return std::make_unique<CpuRecordPipeline>();
}

}  // namespace sigpu::hevc
