#include "hevc/assemble_stage.hpp"

namespace sigpu::hevc {

void order_assembly(const PictureRecords& rec, const std::vector<std::uint8_t>& ctb_done,
                    AssembleOrder& out) {
  out.jobs.clear();
  const TuRecords& tu = rec.tu;
  for (std::size_t t = 0; t < tu.size(); ++t)
    if ((tu.flags[t] & (kTuCoded | kTuIntra)) == kTuCoded)
      out.jobs.push_back(static_cast<std::uint32_t>(t));
  out.tus = static_cast<std::uint32_t>(out.jobs.size());
  for (std::size_t i = 0; i < rec.cu.size(); ++i)
    if (rec.cu.flags[i] & kCuPcm) out.jobs.push_back(static_cast<std::uint32_t>(i));
  out.pcms = static_cast<std::uint32_t>(out.jobs.size()) - out.tus;
  for (std::size_t rs = 0; rs < ctb_done.size(); ++rs)
    if (!ctb_done[rs]) out.jobs.push_back(static_cast<std::uint32_t>(rs));
}

AssembleArgs assemble_args(const PictureRecords& rec, const AssembleOrder& order,
                           const AssembleParams& p, const ResidualPlanes& residual,
                           const InterPlanes& out) {
  return {rec.tu.x.data(),
          rec.tu.y.data(),
          rec.tu.log2.data(),
          rec.tu.comp.data(),
          rec.cu.x.data(),
          rec.cu.y.data(),
          rec.cu.log2.data(),
          rec.cu.pcm_begin.data(),
          rec.pcm.data(),
          order.jobs.data(),
          order.tus,
          order.pcms,
          p,
          residual,
          out};
}

void assemble_stage_cpu(const PictureRecords& rec, const AssembleOrder& order,
                        const AssembleParams& p, const ResidualPlanes& residual,
                        const InterPlanes& out) {
  const AssembleArgs a = assemble_args(rec, order, p, residual, out);
  for (std::uint32_t j = 0; j < order.jobs.size(); ++j) assemble_job(a, j, 0, 1);
}

}  // namespace sigpu::hevc
