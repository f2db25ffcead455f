// The decoder: NAL unit dispatch, parameter set activation, picture boundaries and POC (8.3.1),
// then per picture: slice decoding, in-loop filters, picture hash check, cropping; output in POC
// order (C.5.2). Intra pictures depend on no other picture, so with a parallel backend whole
// pictures are reconstructed (and CPU-filtered) on the shared thread pool, a batch at a time,
// and finished in decoding order. With the cuda backend a batch is filtered on a stage thread
// while the front end parses and reconstructs the next one (schedule.hpp).
#include <algorithm>
#include <future>
#include <optional>
#include <string>

#include <sigpu/hevc.hpp>

#include "core/thread_pool.hpp"
#include "hevc/errors.hpp"
#include "hevc/filters.hpp"
#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/picture.hpp"
#include "hevc/schedule.hpp"
#include "hevc/sei.hpp"
#include "hevc/slice_decoder.hpp"

namespace sigpu::hevc {
namespace {

bool is_vcl(int t) {
  return t < 32;
}
bool is_irap(int t) {
  return t >= kNalBlaWLp && t <= kNalRsvIrap23;
}
bool is_idr(int t) {
  return t == kNalIdrWRadl || t == kNalIdrNLp;
}
// Sub-layer non-reference pictures and RADL/RASL do not update prevTid0Pic.
bool updates_prev_tid0(int t) {
  return !(t <= 14 && (t % 2 == 0)) && !(t >= 6 && t <= 9);
}

struct Where {
  std::size_t index = 0;
  int type = -1;
  std::size_t offset = 0;
  Problem problem(const std::string& what) const {
    return {index, type, offset,
            "NAL unit " + std::to_string(index) + " (" + nal_type_name(type) + ", byte " +
                std::to_string(offset) + "): " + what};
  }
};

struct SliceJob {
  NalUnit nal;
  SliceHeader sh;
  int slice_index = 0;
  Where where;
};

// One picture from its first slice segment to the next picture: parsed headers now, slice data
// decoded later (serially or on a worker).
struct PictureJob {
  std::unique_ptr<DecodedPicture> pic;
  std::vector<SliceJob> slices;
  std::optional<PictureHash> hash;
  bool needs_filter = false;  ///< some slice deblocks or applies SAO
  bool deblocking = false;    ///< some slice deblocks
  Where first;
  std::vector<Problem> problems;
  bool flush_before = false;  ///< an IRAP with NoRaslOutputFlag: output all earlier pictures first
  int max_reorder = 0;        ///< sps_max_num_reorder_pics of its SPS
  bool ok = false;            ///< every CTB decoded (and filtered, when the worker filtered)
  bool filtered = false;
  Frame frame;
};

// Pictures reconstructed together, with the problems found while parsing up to their end (so
// that problems come out in the same order whether or not the batch is filtered later).
struct Batch {
  std::vector<std::unique_ptr<PictureJob>> jobs;
  std::vector<Problem> parse_problems;
};

}  // namespace

namespace {

struct Engine {
  Engine(const DecodeOptions& o, const Schedule& s) : options(o), schedule(s) {}

  DecodeOptions options;
  Schedule schedule;
  std::vector<Problem> problems;        ///< reported, in order
  std::vector<Problem> parse_problems;  ///< found since the last batch was formed
  std::shared_ptr<Sps> sps[16];
  std::shared_ptr<Pps> pps[64];
  std::vector<std::uint8_t> sps_rbsp[16], pps_rbsp[64];  ///< the RBSP each was parsed from

  std::unique_ptr<PictureJob> cur;
  std::vector<std::unique_ptr<PictureJob>> pending;  ///< finished parsing, not yet decoded
  std::optional<SliceHeader> last_independent;
  int slice_index = -1;
  bool skip_picture = false;  ///< the first slice of the picture failed: drop its other slices
  std::optional<PictureHash> next_hash;
  FilterRunner filters;

  bool first_picture = true, after_eos = false;
  bool skip_rasl = false;  ///< NoRaslOutputFlag of the last IRAP: its RASL pictures are not output
  int prev_tid0_poc = 0;
  std::size_t decoded = 0;
  std::vector<Frame> waiting;  ///< decoded, not yet output (POC order)

  Where here;
  const std::function<void(const Frame&)>* sink = nullptr;

  /// The batch being filtered on the stage thread (pipelined schedule).
  Batch in_flight;
  /// Declared last: destroying it waits for the stage thread before what it uses goes away.
  std::future<void> stage;

  void decode(std::span<const std::uint8_t> stream,
              const std::function<void(const Frame&)>& on_frame);
  void handle(std::span<const std::uint8_t> bytes);
  void slice(const NalUnit& nal);
  void start_picture(const NalUnit& nal, const SliceHeader& sh);
  void finish_picture();
  void run_pending();
  void reconstruct(PictureJob& job, bool filter_here, Backend filter_backend);
  bool apply_filters(PictureJob& job, Backend backend);
  void filter_batch(Batch& batch);
  void finish_in_flight();
  void emit(Batch& batch);
  void finish_frame(PictureJob& job);
  void output(Frame&& f, int max_reorder);
  void flush();
};

}  // namespace

struct Decoder::Impl : Engine {
  using Engine::Engine;
};

Schedule schedule_for(Backend backend) {
  switch (resolve(backend)) {
    case Backend::cpu:
      return {};
    case Backend::cuda:
      return {.parallel = true, .pipelined = true, .filter = Backend::cuda};
    default:
      return {.parallel = true, .filter = Backend::cpu_parallel};
  }
}

std::vector<Problem> decode_with(const Schedule& schedule, const DecodeOptions& options,
                                 std::span<const std::uint8_t> stream,
                                 const std::function<void(const Frame&)>& on_frame) {
  Engine e(options, schedule);
  e.decode(stream, on_frame);
  return e.problems;
}

Decoder::Decoder(DecodeOptions options)
    : impl_(std::make_unique<Impl>(options, schedule_for(options.backend))) {}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;
const std::vector<Problem>& Decoder::problems() const {
  return impl_->problems;
}
bool Decoder::filters_available() {
  return hevc::filters_available();
}

void Decoder::decode(std::span<const std::uint8_t> stream,
                     const std::function<void(const Frame&)>& on_frame) {
  impl_->decode(stream, on_frame);
}

void Engine::decode(std::span<const std::uint8_t> stream,
                    const std::function<void(const Frame&)>& on_frame) {
  sink = &on_frame;
  for (const NalSpan& s : split_annexb(stream)) {
    here.offset = s.start_code;
    here.type = s.end > s.begin ? (stream[s.begin] >> 1) & 0x3f : -1;
    handle(stream.subspan(s.begin, s.end - s.begin));
    ++here.index;
  }
  finish_picture();
  run_pending();
  finish_in_flight();
  problems.insert(problems.end(), parse_problems.begin(), parse_problems.end());
  parse_problems.clear();
  flush();
  sink = nullptr;
}

void Engine::handle(std::span<const std::uint8_t> bytes) {
  NalUnit nal;
  try {
    nal = parse_nal(bytes);
  } catch (const DecodeError& e) {
    parse_problems.push_back(here.problem(e.what()));
    return;
  }
  if (nal.layer_id != 0) return;  // other layers (multi-layer extensions) are ignored
  try {
    switch (nal.type) {
      case kNalVps: {
        Vps v;
        parse_vps(nal.rbsp, v);
        break;
      }
      case kNalSps: {
        auto s = std::make_shared<Sps>();
        parse_sps(nal.rbsp, *s);
        // A repeated identical SPS keeps its object: slices check that identity below.
        if (!sps[s->id] || sps_rbsp[s->id] != nal.rbsp) sps[s->id] = s;
        sps_rbsp[s->id] = nal.rbsp;
        break;
      }
      case kNalPps: {
        auto p = std::make_shared<Pps>();
        parse_pps(nal.rbsp, *p);
        if (!pps[p->id] || pps_rbsp[p->id] != nal.rbsp) pps[p->id] = p;
        pps_rbsp[p->id] = nal.rbsp;
        break;
      }
      case kNalPrefixSei:
      case kNalSuffixSei: {
        const int comps = cur ? (cur->pic->sps->chroma_format_idc == 0 ? 1 : 3) : 3;
        auto h = parse_sei_picture_hash(nal.rbsp, comps);
        if (h) (nal.type == kNalSuffixSei && cur ? cur->hash : next_hash) = h;
        break;
      }
      case kNalEos:
        finish_picture();
        after_eos = true;
        break;
      default:
        if (is_vcl(nal.type) &&
            (nal.type <= kNalRaslR || (nal.type >= kNalBlaWLp && nal.type <= kNalCraNut)))
          slice(nal);
        break;
    }
  } catch (const Error& e) {
    parse_problems.push_back(here.problem(e.what()));
    if (is_vcl(nal.type) && cur) cur->pic->damaged = true;
  }
}

void Engine::slice(const NalUnit& nal) {
  // A new picture starts with first_slice_segment_in_pic_flag.
  const bool first = !nal.rbsp.empty() && (nal.rbsp[0] & 0x80);
  if (first) {
    finish_picture();
    skip_picture = false;
  } else if (skip_picture) {
    return;
  } else if (!cur) {
    skip_picture = true;
    throw DecodeError("slice segment of a picture whose first slice segment is missing");
  }
  const Pps* pps_table[64];
  const Sps* sps_table[16];
  for (int i = 0; i < 64; ++i) pps_table[i] = pps[i].get();
  for (int i = 0; i < 16; ++i) sps_table[i] = sps[i].get();
  SliceHeader sh;
  try {
    const int pps_id = peek_slice_pps_id(nal);
    if (pps[pps_id] && sps[pps[pps_id]->sps_id]) {
      check_supported(*sps[pps[pps_id]->sps_id]);
      check_supported(*pps[pps_id]);
    }
    sh = parse_slice_header(nal, pps_table, sps_table,
                            first ? nullptr : (last_independent ? &*last_independent : nullptr));
    if (!first && sh.pps_id != cur->pic->pps->id)
      throw DecodeError("slice_pic_parameter_set_id: differs within the picture");
    // The slice header was parsed with the parameter sets in force now; the picture was set up
    // with those of its first slice.
    if (!first && (pps[sh.pps_id] != cur->pic->pps || sps[pps[sh.pps_id]->sps_id] != cur->pic->sps))
      throw DecodeError("slice_pic_parameter_set_id: its PPS or SPS changed within the picture");
    if (first) start_picture(nal, sh);
  } catch (const Error&) {
    if (first) skip_picture = true;
    throw;
  }
  if (!sh.dependent) {
    last_independent = sh;
    ++slice_index;
    hevc_filter::SliceParams p;
    p.beta_offset_div2 = static_cast<std::int8_t>(sh.beta_offset_div2);
    p.tc_offset_div2 = static_cast<std::int8_t>(sh.tc_offset_div2);
    p.sao_luma = sh.sao_luma;
    p.sao_chroma = sh.sao_chroma;
    p.filter_across_slices = sh.loop_filter_across_slices;
    cur->pic->info.slices.push_back(p);
    if (!sh.deblocking_disabled || sh.sao_luma || sh.sao_chroma) cur->needs_filter = true;
    if (!sh.deblocking_disabled) cur->deblocking = true;
  }
  cur->slices.push_back({nal, sh, slice_index, here});
}

void Engine::start_picture(const NalUnit& nal, const SliceHeader& sh) {
  const std::shared_ptr<Pps>& p = pps[sh.pps_id];
  const std::shared_ptr<Sps>& s = sps[p->sps_id];
  if (std::int64_t{s->width} * s->height > options.max_luma_samples)
    throw DecodeError("pic_width_in_luma_samples: " + std::to_string(s->width) + "x" +
                      std::to_string(s->height) + " exceeds the decoder's limit of " +
                      std::to_string(options.max_luma_samples) + " luma samples");
  if (s->width % (1 << s->log2_min_cb) || s->height % (1 << s->log2_min_cb))
    throw DecodeError("pic_width_in_luma_samples: not a multiple of MinCbSizeY");
  if (p->geometry_sps != s.get()) {
    p->geometry = derive_geometry(*p, *s);
    p->geometry_sps = s.get();
  }
  const bool no_rasl_output = is_idr(nal.type) || (nal.type >= kNalBlaWLp && nal.type <= 18) ||
                              (nal.type == kNalCraNut && (first_picture || after_eos));
  if (is_irap(nal.type)) skip_rasl = no_rasl_output;
  // Picture order count (8.3.1).
  const int max_lsb = 1 << s->log2_max_poc_lsb;
  int poc;
  if (is_irap(nal.type) && no_rasl_output) {
    poc = is_idr(nal.type) ? 0 : sh.poc_lsb;
  } else {
    const int prev_lsb = prev_tid0_poc & (max_lsb - 1);
    const int prev_msb = prev_tid0_poc - prev_lsb;
    int msb = prev_msb;
    if (sh.poc_lsb < prev_lsb && prev_lsb - sh.poc_lsb >= max_lsb / 2)
      msb = prev_msb + max_lsb;
    else if (sh.poc_lsb > prev_lsb && sh.poc_lsb - prev_lsb > max_lsb / 2)
      msb = prev_msb - max_lsb;
    poc = msb + sh.poc_lsb;
  }
  if (nal.temporal_id == 0 && updates_prev_tid0(nal.type)) prev_tid0_poc = poc;
  first_picture = false;
  after_eos = false;

  cur = std::make_unique<PictureJob>();
  cur->pic = std::make_unique<DecodedPicture>();
  cur->pic->allocate(s, p);
  cur->pic->poc = poc;
  cur->pic->decode_index = decoded++;
  cur->pic->output = sh.pic_output && !((nal.type == 8 || nal.type == kNalRaslR) && skip_rasl);
  cur->first = here;
  cur->flush_before = is_irap(nal.type) && no_rasl_output;
  cur->max_reorder = s->max_num_reorder;
  last_independent.reset();
  slice_index = -1;
  cur->hash = next_hash;
  next_hash.reset();
}

void Engine::finish_picture() {
  if (!cur) return;
  pending.push_back(std::move(cur));
  if (!schedule.parallel || pending.size() >= ThreadPool::shared().size()) run_pending();
}

// Slice data, then (when filter_here) the CPU filters, the hash check and cropping. Touches
// only the job: runs on any thread.
void Engine::reconstruct(PictureJob& job, bool filter_here, Backend filter_backend) {
  DecodedPicture& pic = *job.pic;
  PictureParseState state;
  for (const SliceJob& s : job.slices) {
    try {
      SliceDecoder(pic, s.sh, s.slice_index, state).decode(s.nal);
    } catch (const Error& e) {
      job.problems.push_back(s.where.problem(e.what()));
      pic.damaged = true;
    }
  }
  const int total = pic.sps->width_ctbs() * pic.sps->height_ctbs();
  if (pic.decoded_ctbs != total || pic.damaged) {
    job.problems.push_back(job.first.problem(
        "picture " + std::to_string(pic.decode_index) + " (POC " + std::to_string(pic.poc) +
        "): " + std::to_string(total - pic.decoded_ctbs) + " of " + std::to_string(total) +
        " CTBs missing or damaged; picture dropped"));
    return;
  }
  job.ok = true;
  pic.info.deblocking = job.deblocking;  // per-edge flags close the slices that disable it
  job.filtered = !job.needs_filter;
  if (!filter_here || !apply_filters(job, filter_backend)) return;
  finish_frame(job);
}

// False (with a problem) when the filters failed: the picture is dropped.
bool Engine::apply_filters(PictureJob& job, Backend backend) {
  if (!job.needs_filter || options.unfiltered || !filters_available()) return true;
  try {
    filters.apply(*job.pic, backend);
  } catch (const Error& e) {
    job.problems.push_back(job.first.problem("picture " + std::to_string(job.pic->decode_index) +
                                             ": in-loop filters failed: " + e.what() +
                                             "; picture dropped"));
    job.ok = false;
    return false;
  }
  job.filtered = true;
  return true;
}

void Engine::finish_frame(PictureJob& job) {
  const DecodedPicture& pic = *job.pic;
  const Sps& s = *pic.sps;
  Frame& f = job.frame;
  f.width = s.width - s.conf_left - s.conf_right;
  f.height = s.height - s.conf_top - s.conf_bottom;
  f.bit_depth_luma = s.bit_depth_luma;
  f.bit_depth_chroma = s.bit_depth_chroma;
  f.chroma_format_idc = s.chroma_format_idc;
  f.poc = pic.poc;
  f.decode_index = pic.decode_index;
  f.filtered = job.filtered;
  if (job.hash) {
    f.hash_kind = job.hash->kind();
    if (!job.filtered) {
      f.hash = HashStatus::unchecked;
    } else if (const unsigned bad = hash_mismatches(*job.hash, pic); bad == 0) {
      f.hash = HashStatus::matched;
    } else {
      f.hash = HashStatus::mismatched;
      std::string planes;
      for (int c = 0; c < 3; ++c)
        if (bad & (1u << c)) planes += std::string(planes.empty() ? "" : ", ") + "YUV"[c];
      job.problems.push_back(job.first.problem(
          "picture " + std::to_string(pic.decode_index) + " (POC " + std::to_string(pic.poc) +
          "): decoded picture hash (" + job.hash->kind() + ") mismatch in " + planes));
    }
  }
  const int comps = s.chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    const int sh = c ? 1 : 0;
    const int x0 = s.conf_left >> sh, y0 = s.conf_top >> sh;
    const int w = f.width >> sh, h = f.height >> sh;
    f.plane_width[c] = w;
    f.plane_height[c] = h;
    f.planes[c].resize(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y)
      std::copy_n(pic.planes[c].begin() + static_cast<std::ptrdiff_t>(y0 + y) * pic.width[c] + x0,
                  w, f.planes[c].begin() + static_cast<std::ptrdiff_t>(y) * w);
  }
}

void Engine::run_pending() {
  if (pending.empty()) return;
  Batch batch{std::move(pending), std::move(parse_problems)};
  pending.clear();
  parse_problems.clear();
  // Pipelined, the filters run on the stage thread; otherwise in the picture workers. The shared
  // pool takes one parallel_for at a time, so filters inside a picture worker run serially.
  const bool filter_here = !schedule.pipelined;
  if (schedule.parallel && batch.jobs.size() > 1) {
    ThreadPool::shared().parallel_for(
        batch.jobs.size(),
        [&](std::size_t b, std::size_t e) {
          for (std::size_t i = b; i < e; ++i)
            reconstruct(*batch.jobs[i], filter_here, Backend::cpu);
        },
        1);
  } else {
    for (auto& job : batch.jobs) reconstruct(*job, filter_here, schedule.filter);
  }
  if (!schedule.pipelined) {
    emit(batch);
    return;
  }
  // The previous batch has been filtering while this one was reconstructed.
  finish_in_flight();
  in_flight = std::move(batch);
  stage = std::async(std::launch::async, [this] { filter_batch(in_flight); });
}

// The stage thread: filters and finishes the batch's pictures in decoding order. Touches only
// the batch and `filters`, which nothing else uses while a stage is in flight.
void Engine::filter_batch(Batch& batch) {
  for (auto& job : batch.jobs)
    if (job->ok && apply_filters(*job, schedule.filter)) finish_frame(*job);
}

void Engine::finish_in_flight() {
  if (!stage.valid()) return;
  stage.get();
  Batch done = std::move(in_flight);
  in_flight = {};
  emit(done);
}

// On the caller's thread, in decoding order: problems, then output.
void Engine::emit(Batch& batch) {
  problems.insert(problems.end(), batch.parse_problems.begin(), batch.parse_problems.end());
  for (auto& job : batch.jobs) {
    problems.insert(problems.end(), job->problems.begin(), job->problems.end());
    if (job->flush_before) flush();
    if (job->ok && job->pic->output) output(std::move(job->frame), job->max_reorder);
  }
}

void Engine::output(Frame&& f, int max_reorder) {
  waiting.push_back(std::move(f));
  while (static_cast<int>(waiting.size()) > max_reorder) {
    auto it = std::min_element(waiting.begin(), waiting.end(),
                               [](const Frame& a, const Frame& b) { return a.poc < b.poc; });
    (*sink)(*it);
    waiting.erase(it);
  }
}

void Engine::flush() {
  std::sort(waiting.begin(), waiting.end(),
            [](const Frame& a, const Frame& b) { return a.poc < b.poc; });
  for (const Frame& f : waiting) (*sink)(f);
  waiting.clear();
}

}  // namespace sigpu::hevc
