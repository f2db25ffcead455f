// summarize(): parameter sets, pictures and slice segment headers, without decoding slice data.
#include <cstdio>
#include <memory>

#include <sigpu/hevc.hpp>

#include "hevc/errors.hpp"
#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/sei.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

StreamSummary summarize(std::span<const std::uint8_t> stream) {
  StreamSummary out;
  std::shared_ptr<Sps> sps[16];
  std::shared_ptr<Pps> pps[64];
  std::optional<SliceHeader> independent;
  std::size_t index = 0;
  for (const NalSpan& s : split_annexb(stream)) {
    const int type = s.end > s.begin ? (stream[s.begin] >> 1) & 0x3f : -1;
    auto note = [&](const std::string& what) {
      out.problems.push_back({index, type, s.start_code,
                              "NAL unit " + std::to_string(index) + " (" + nal_type_name(type) +
                                  ", byte " + std::to_string(s.start_code) + "): " + what});
    };
    try {
      const NalUnit nal = parse_nal(stream.subspan(s.begin, s.end - s.begin));
      if (nal.type == kNalSps) {
        auto p = std::make_shared<Sps>();
        parse_sps(nal.rbsp, *p);
        sps[p->id] = p;
        out.lines.push_back(p->describe());
      } else if (nal.type == kNalPps) {
        auto p = std::make_shared<Pps>();
        parse_pps(nal.rbsp, *p);
        pps[p->id] = p;
        out.lines.push_back(p->describe());
      } else if (nal.type == kNalVps) {
        Vps v;
        parse_vps(nal.rbsp, v);
        out.lines.push_back("VPS " + std::to_string(v.id));
      } else if (nal.type == kNalSuffixSei || nal.type == kNalPrefixSei) {
        if (auto h = parse_sei_picture_hash(nal.rbsp, 3))
          out.lines.push_back(std::string("  SEI decoded picture hash (") + h->kind() + ")");
      } else if (nal.type < 32 &&
                 (nal.type <= kNalRaslR || (nal.type >= kNalBlaWLp && nal.type <= kNalCraNut))) {
        const Pps* pt[64];
        const Sps* st[16];
        for (int i = 0; i < 64; ++i) pt[i] = pps[i].get();
        for (int i = 0; i < 16; ++i) st[i] = sps[i].get();
        const bool first = !nal.rbsp.empty() && (nal.rbsp[0] & 0x80);
        if (first) {
          ++out.pictures;
          independent.reset();
          out.lines.push_back("picture " + std::to_string(out.pictures - 1) + ": " +
                              nal_type_name(nal.type));
        }
        const SliceHeader h =
            parse_slice_header(nal, pt, st, independent ? &*independent : nullptr);
        if (!h.dependent) independent = h;
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "  %s slice segment at CTB %d: QP %d, POC lsb %d, SAO %s/%s, deblocking %s, "
                      "%zu entry points, %zu bytes",
                      h.dependent ? "dependent" : "I", h.segment_address, h.slice_qp, h.poc_lsb,
                      h.sao_luma ? "on" : "off", h.sao_chroma ? "on" : "off",
                      h.deblocking_disabled ? "off" : "on", h.entry_points.size(),
                      nal.rbsp.size() + 2);
        out.lines.push_back(buf);
      }
    } catch (const DecodeError& e) {
      note(e.what());
    }
    ++index;
  }
  return out;
}

}  // namespace sigpu::hevc
