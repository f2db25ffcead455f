// summarize(): parameter sets, pictures and slice segment headers, without decoding slice data.
#include <cstdio>
#include <memory>

#include <sigpu/hevc.hpp>

#include "hevc/errors.hpp"
#include "hevc/nal.hpp"
#include "hevc/nal_assembler.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/sei.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

namespace {

// One NAL unit at a time, as the NalAssembler hands them on.
class Summarizer {
 public:
  void nal(std::span<const std::uint8_t> bytes, std::size_t start_code);
  // Throws InputError when there was nothing to summarize.
  StreamSummary finish(std::size_t bytes, std::size_t nal_units);

 private:
  StreamSummary out;
  std::shared_ptr<Sps> sps[16];
  std::shared_ptr<Pps> pps[64];
  std::optional<SliceHeader> independent;
  std::size_t index = 0;
};

StreamSummary Summarizer::finish(std::size_t bytes, std::size_t nal_units) {
  if (bytes == 0) throw InputError("empty input");
  if (nal_units == 0)
    throw InputError("no HEVC NAL units found in " + std::to_string(bytes) +
                     " bytes (no start code 00 00 01)");
  return std::move(out);
}

void Summarizer::nal(std::span<const std::uint8_t> bytes, std::size_t start_code) {
  {
    const int type = bytes.empty() ? -1 : (bytes[0] >> 1) & 0x3f;
    auto note = [&](const std::string& what) {
      out.problems.push_back({index, type, start_code,
                              "NAL unit " + std::to_string(index) + " (" + nal_type_name(type) +
                                  ", byte " + std::to_string(start_code) + "): " + what});
    };
    try {
      const NalUnit nal = parse_nal(bytes);
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
        static constexpr const char* kType[3] = {"B", "P", "I"};
        char refs[64] = "";
        if (h.slice_type != 2 && !h.dependent)
          std::snprintf(refs, sizeof refs, ", %d+%d references", h.num_ref_idx[0],
                        h.num_ref_idx[1]);
        char buf[320];
        std::snprintf(buf, sizeof buf,
                      "  %s slice segment at CTB %d: QP %d, POC lsb %d%s, SAO %s/%s, "
                      "deblocking %s, %zu entry points, %zu bytes",
                      h.dependent ? "dependent" : kType[h.slice_type], h.segment_address,
                      h.slice_qp, h.poc_lsb, refs, h.sao_luma ? "on" : "off",
                      h.sao_chroma ? "on" : "off", h.deblocking_disabled ? "off" : "on",
                      h.entry_points.size(), nal.rbsp.size() + 2);
        out.lines.push_back(buf);
      }
    } catch (const DecodeError& e) {
      note(e.what());
    }
    ++index;
  }
}

}  // namespace

StreamSummary summarize(std::span<const std::uint8_t> stream) {
  Summarizer s;
  NalAssembler a(max_nal_bytes_for(DecodeOptions{}.max_luma_samples));
  const auto on_nal = [&s](auto nal, std::size_t at) { s.nal(nal, at); };
  a.push(stream, on_nal);
  a.finish(on_nal);
  return s.finish(a.bytes(), a.nal_units());
}

StreamSummary summarize(Source& source) {
  Summarizer s;
  NalAssembler a(max_nal_bytes_for(DecodeOptions{}.max_luma_samples));
  const auto on_nal = [&s](auto nal, std::size_t at) { s.nal(nal, at); };
  while (const Chunk c = source.read()) a.push(c, on_nal);
  a.finish(on_nal);
  StreamSummary out = s.finish(a.bytes(), a.nal_units());
  out.problems.insert(out.problems.begin(), source.problems().begin(), source.problems().end());
  return out;
}

}  // namespace sigpu::hevc
