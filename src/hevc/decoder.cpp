// The decoder: Annex B input in pieces (nal_assembler.hpp), NAL unit dispatch, parameter set
// activation, picture boundaries and POC (8.3.1), the reference picture set and lists (dpb.hpp),
// then per picture: slice decoding, in-loop filters, picture hash check, cropping; output in POC
// order (C.5.2). Intra pictures depend on no other picture, so with a parallel backend whole
// pictures stream through the decoder's workers, many in flight, and come out in decoding order;
// with the cuda backend each is filtered on the GPU stage as soon as it is reconstructed
// (schedule.hpp). A picture with P or B slices starts once the pictures it predicts from are
// finished.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <sigpu/hevc.hpp>

#include "core/timer.hpp"
#include "hevc/dpb.hpp"
#include "hevc/errors.hpp"
#include "hevc/filters.hpp"
#include "hevc/nal.hpp"
#include "hevc/nal_assembler.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/picture.hpp"
#include "hevc/record_plan.hpp"
#include "hevc/recycler.hpp"
#include "hevc/schedule.hpp"
#include "hevc/sei.hpp"
#include "hevc/slice_decoder.hpp"
#include "hevc/work_queue.hpp"
#include "hevc/wpp_rows.hpp"

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
  std::shared_ptr<const RefPicLists> refs;  ///< P and B slices
  int slice_index = 0;
  Where where;
};

// One picture from its first slice segment to the next picture: parsed headers now, slice data
// decoded later (serially or on a worker).
struct PictureJob {
  std::vector<Problem> parse_problems;  ///< found while parsing up to its end, reported first
  std::shared_ptr<DecodedPicture> pic;
  std::vector<SliceJob> slices;
  RefPicSet rps;  ///< the pictures its slices' lists are made of
  std::optional<PictureHash> hash;
  bool needs_filter = false;  ///< some slice deblocks or applies SAO
  bool deblocking = false;    ///< some slice deblocks
  Where first;
  std::vector<Problem> problems;
  bool flush_before = false;  ///< an IRAP with NoRaslOutputFlag: output all earlier pictures first
  /// May parse its WPP rows side by side (wpp_rows.hpp); see finish_picture.
  bool rows_side_by_side = true;
  int max_reorder = 0;  ///< sps_max_num_reorder_pics of its SPS
  int max_latency = 0;  ///< SpsMaxLatencyPictures of its SPS, 0 for none
  bool ok = false;      ///< every CTB decoded (and filtered, once the filters ran)
  bool filtered = false;
  bool parsed = false;  ///< the workers finished with it (guarded by Engine::mutex)
  bool done = false;    ///< every stage finished with it (guarded by Engine::mutex)
  Frame frame;
  /// With a record pipeline: its work, planned by the worker that parsed it.
  RecordWork work;
  RecordPlan plan;
  /// With the record pipeline on the GPU, an inter picture's filter side information staged by
  /// its worker (its GPU lane only queues the copy), held until its GPU work is done.
  PooledStore filter_side;
  /// SIGPU_TRACE: seconds since the engine started when it was handed on, its parse began and
  /// ended, its lane took it and had queued its GPU work, the work was done, its finishing began
  /// and ended; and the CPU seconds its worker spent in the parse (the rest of the parse's time
  /// it waited, on other pictures' parses or on the row threads parsing its rows).
  double t[8] = {};
  double parse_cpu = 0;
};

}  // namespace

namespace {

/// Threads driving the GPU filter, each with its own CudaFilter (one CUDA stream).
constexpr int kGpuLanes = 4;

/// Pictures kept for reuse beyond those in flight: the decoded picture buffer's (at most
/// sps_max_dec_pic_buffering, 16) and the one the front end is starting.
constexpr std::size_t kKeptPictures = 16 + 2;

/// The most pictures a record pipeline keeps in flight, whatever the number of cores, and the
/// most luma samples of them (48 4K pictures): each holds its planes, its records and its staged
/// filter side information (10 MB of pinned memory at 4K).
constexpr std::size_t kMaxRecordPicturesInFlight = 64;
constexpr std::int64_t kMaxRecordSamplesInFlight = std::int64_t{48} * 3840 * 2160;

struct Engine {
  Engine(const DecodeOptions& o, const Schedule& s)
      : options(o),
        schedule(s),
        trace(std::getenv("SIGPU_TRACE") != nullptr),
        assembler(max_nal_bytes_for(o.max_luma_samples)) {
    if (o.frames_on_device && s.records != Backend::cuda)
      throw UsageError("frames on the device need the cuda backend reconstructing on the GPU");
    pictures.keep(kKeptPictures);
  }

  DecodeOptions options;
  Schedule schedule;
  bool trace = false;  ///< SIGPU_TRACE: a line per picture on stderr, where its time went
  Stopwatch clock;
  NalAssembler assembler;
  /// This stream's outcome so far, for finish()'s verdict on a stream that output nothing.
  std::size_t stream_pictures = 0, stream_frames = 0;
  std::size_t stream_first_problem = 0;  ///< index in `problems` of this stream's first
  std::string first_unsupported;         ///< the first Unsupported refusal's message
  std::vector<Problem> problems;         ///< reported, in order
  std::vector<Problem> parse_problems;   ///< found since the last picture was handed on
  std::shared_ptr<Sps> sps[16];
  std::shared_ptr<Pps> pps[64];
  std::vector<std::uint8_t> sps_rbsp[16], pps_rbsp[64];  ///< the RBSP each was parsed from

  std::unique_ptr<PictureJob> cur;
  std::optional<SliceHeader> last_independent;
  int slice_index = -1;
  bool skip_picture = false;  ///< the first slice of the picture failed: drop its other slices
  std::optional<PictureHash> next_hash;
  /// One per GPU lane (a lane's filter is one CUDA stream); lane 0 also serves the CPU filters,
  /// which keep no state.
  FilterRunner filters[kGpuLanes];

  bool first_picture = true, after_eos = false;
  bool skip_rasl = false;  ///< NoRaslOutputFlag of the last IRAP: its RASL pictures are skipped
  int prev_tid0_poc = 0;
  std::size_t decoded = 0;
  std::vector<Frame> waiting;                    ///< decoded, not yet output
  std::vector<int> latency;                      ///< PicLatencyCount of each waiting picture
  std::vector<DpbEntry> dpb;                     ///< pictures marked as used for reference
  std::shared_ptr<const RefPicLists> last_refs;  ///< of the last independent slice segment

  Where here;
  const FrameSink* sink = nullptr;

  PlanePool plane_pool;
  PlanePool side_pool;  ///< PictureJob::filter_side (one size per resolution: inter pictures')
  std::mutex mutex;     ///< guards PictureJob::done and spare_frames
  std::condition_variable finished;  ///< some PictureJob became done
  std::vector<Frame> spare_frames;   ///< output frames whose planes the next frames reuse
  /// Pictures whose per-block state the next pictures reuse; their planes go back to the pools
  /// as they are dropped.
  Recycler<DecodedPicture> pictures{[](DecodedPicture& p) {
    p.store.reset();
    p.work_store.reset();
    std::fill_n(p.work_planes, 3, nullptr);
  }};
  /// Plans of emitted pictures, whose tables the next pictures' plans reuse (the caller's
  /// thread's).
  std::vector<RecordPlan> spare_plans;
  /// Pictures handed to the stages, in decoding order (the caller's thread's alone).
  std::deque<std::unique_ptr<PictureJob>> flight;
  std::size_t max_in_flight = 0;
  /// With Schedule::records: reconstructs and filters whole pictures, queued by gpu_lanes[0] in
  /// decoding order; gpu_lanes[1] waits for each and hands it on to be finished.
  std::unique_ptr<RecordPipeline> record_pipeline;
  /// Threads parsing WPP pictures' rows (wpp_rows.hpp), apart from the workers, which may all
  /// be taken by pictures waiting for their rows. Before the workers, which queue work for them.
  std::unique_ptr<WorkQueue> row_threads;
  bool previous_intra = false;  ///< the last picture handed to the workers was intra
  /// Declared last, the GPU lanes after the workers: destroying them runs what is queued (the
  /// lanes queue work for the workers) before the jobs and filters they use go away.
  std::unique_ptr<WorkQueue> workers;
  /// The GPU stage: lanes taking the pictures in turn, so that pictures' copies, kernels and
  /// host-side preparation overlap (one stream would leave the copy engines, the GPU and the
  /// lane's CPU idle in turn, and the last pictures of a stream would queue behind each other).
  std::unique_ptr<WorkQueue> gpu_lanes[kGpuLanes];

  void push(std::span<const std::uint8_t> bytes, const FrameSink& on_frame);
  /// Calls the caller's on_frame (sink); what it throws leaves as CallerThrew.
  void deliver(Frame& f);
  void finish(const FrameSink& on_frame);
  void end_stream();
  void new_stream();
  void on_nal(std::span<const std::uint8_t> nal, std::size_t start_code);
  void handle(std::span<const std::uint8_t> bytes);
  void slice(const NalUnit& nal);
  void start_picture(const NalUnit& nal, const SliceHeader& sh);
  void finish_picture();
  /// Starts the workers (and the record pipeline) for pictures of `luma_samples` samples.
  void start_stages(std::int64_t luma_samples);
  void picture_task(PictureJob& job);
  void gpu_task(PictureJob& job);
  void record_task(PictureJob& job);
  std::vector<RecordSlice> record_slices(const PictureJob& job) const;
  void mark_parsed(PictureJob& job);
  void mark_done(PictureJob& job);
  void drain(std::size_t limit);
  void wait_for_references(const PictureJob& job);
  void reconstruct(PictureJob& job);
  bool will_filter(const PictureJob& job) const;
  void stage_side_info(PictureJob& job);
  bool apply_filters(PictureJob& job, Backend backend, FilterRunner& runner);
  void emit(PictureJob& job);
  void finish_frame(PictureJob& job);
  void output(Frame&& f, int max_reorder, int max_latency);
  void recycle(Frame&& f);
  void flush();
  std::shared_ptr<DecodedPicture> make_missing(const Sps& s, const std::shared_ptr<Pps>& p,
                                               int poc);
};

}  // namespace

struct Decoder::Impl : Engine {
  using Engine::Engine;
};

Schedule schedule_for(Backend backend, bool reconstruct_on_gpu) {
  switch (resolve(backend)) {
    case Backend::cpu:
      return {};
    case Backend::cuda:
      if (reconstruct_on_gpu) return {.parallel = true, .records = Backend::cuda};
      return {.parallel = true, .pipelined = true, .filter = Backend::cuda};
    default:
      return {.parallel = true, .filter = Backend::cpu_parallel};
  }
}

std::vector<Problem> decode_with(const Schedule& schedule, const DecodeOptions& options,
                                 std::span<const std::uint8_t> stream, const FrameSink& on_frame) {
  Engine e(options, schedule);
  e.push(stream, on_frame);
  e.finish(on_frame);
  return e.problems;
}

Decoder::Decoder(DecodeOptions options) {
  const Schedule s = schedule_for(options.backend, options.reconstruct_on_gpu);
  if ((s.records == Backend::cuda || s.filter == Backend::cuda) && cuda_devices().empty())
    throw UnsupportedError("the cuda backend needs a CUDA device, and none is present");
  impl_ = std::make_unique<Impl>(options, s);
}
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;
const std::vector<Problem>& Decoder::problems() const {
  return impl_->problems;
}
void copy_to_host(Frame& frame) {
  if (!frame.device.planes[0]) return;
  for (int c = 0; c < 3; ++c) {
    const auto w = static_cast<std::size_t>(frame.plane_width[c]);
    const auto h = static_cast<std::size_t>(frame.plane_height[c]);
    frame.planes[c].resize(w * h);
    if (w && h)
      copy_to_host(frame.planes[c].data(), frame.device.planes[c],
                   static_cast<std::size_t>(frame.device.pitch[c]), w, h);
  }
  frame.device = {};
}

bool Decoder::filters_available() {
  return hevc::filters_available();
}

void Decoder::push(std::span<const std::uint8_t> bytes, const FrameSink& on_frame) {
  impl_->push(bytes, on_frame);
}

void Decoder::finish(const FrameSink& on_frame) {
  impl_->finish(on_frame);
}

void Decoder::decode(std::span<const std::uint8_t> stream, const FrameSink& on_frame) {
  impl_->push(stream, on_frame);
  impl_->finish(on_frame);
}

namespace {

/// What the caller's on_frame threw, carried past the decoder's own handlers (which take a
/// sigpu::Error for a problem of the stream and decode on) to push() or finish(), which throw
/// it again as it was.
struct CallerThrew {
  std::exception_ptr error;
};

// Points Engine::sink at the caller's callback for one call.
struct SinkScope {
  const FrameSink*& sink;
  SinkScope(const FrameSink*& s, const FrameSink& f) : sink(s) { sink = &f; }
  ~SinkScope() { sink = nullptr; }
};

}  // namespace

void Engine::push(std::span<const std::uint8_t> bytes, const FrameSink& on_frame) {
  SinkScope scope(sink, on_frame);
  try {
    try {
      assembler.push(bytes, [this](auto nal, std::size_t at) { on_nal(nal, at); });
    } catch (const InputError&) {
      // No start code for longer than any picture needs: what was decoded before goes out, and
      // the decoder is ready for a new stream.
      end_stream();
      new_stream();
      throw;
    }
  } catch (const CallerThrew& c) {
    std::rethrow_exception(c.error);
  }
}

void Engine::deliver(Frame& f) {
  try {
    (*sink)(f);
  } catch (...) {
    throw CallerThrew{std::current_exception()};
  }
}

void Engine::on_nal(std::span<const std::uint8_t> nal, std::size_t start_code) {
  here.offset = start_code;
  here.type = nal.empty() ? -1 : (nal[0] >> 1) & 0x3f;
  handle(nal);
  ++here.index;
}

// Decodes what is pending, outputs every picture and starts over for a new stream.
void Engine::end_stream() {
  finish_picture();
  drain(0);
  problems.insert(problems.end(), parse_problems.begin(), parse_problems.end());
  parse_problems.clear();
  flush();
  dpb.clear();
  assembler.reset();
  here = {};
}

void Engine::new_stream() {
  stream_pictures = stream_frames = 0;
  first_unsupported.clear();
  stream_first_problem = problems.size();
}

void Engine::finish(const FrameSink& on_frame) {
  SinkScope scope(sink, on_frame);
  std::size_t bytes = 0, nals = 0;
  try {
    assembler.finish([this](auto nal, std::size_t at) { on_nal(nal, at); });
    bytes = assembler.bytes();
    nals = assembler.nal_units();
    end_stream();
  } catch (const CallerThrew& c) {
    std::rethrow_exception(c.error);
  }
  const std::size_t pictures = stream_pictures, frames = stream_frames;
  const std::string unsupported = std::move(first_unsupported);
  const std::string problem =
      problems.size() > stream_first_problem ? problems[stream_first_problem].message : "";
  new_stream();
  if (frames > 0) return;
  if (bytes == 0) throw InputError("empty input");
  if (nals == 0)
    throw InputError("no HEVC NAL units found in " + std::to_string(bytes) +
                     " bytes (no start code 00 00 01)");
  if (!unsupported.empty()) throw UnsupportedError("no picture decoded: " + unsupported);
  if (pictures == 0)
    throw InputError("no decodable HEVC picture in " + std::to_string(bytes) + " bytes (" +
                     std::to_string(nals) + " NAL units)" +
                     (problem.empty() ? "" : "; the first problem: " + problem));
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
    if (first_unsupported.empty() && dynamic_cast<const Unsupported*>(&e))
      first_unsupported = parse_problems.back().message;
    if (is_vcl(nal.type) && cur) cur->pic->damaged = true;
  }
}

void Engine::slice(const NalUnit& nal) {
  // A new picture starts with first_slice_segment_in_pic_flag.
  const bool first = !nal.rbsp.empty() && (nal.rbsp[0] & 0x80);
  if (first) {
    finish_picture();
    skip_picture = false;
    // RASL pictures of an IRAP with NoRaslOutputFlag refer to pictures before it that the
    // decoder never had: they are skipped (8.1.3), as FFmpeg and HM do.
    if ((nal.type == kNalRaslN || nal.type == kNalRaslR) && skip_rasl) {
      skip_picture = true;
      return;
    }
    // A stream (or one after an end of sequence) starts at an IRAP picture; pictures before one
    // refer to pictures the decoder never had.
    if ((first_picture || after_eos) && !is_irap(nal.type)) {
      skip_picture = true;
      throw DecodeError(
          "picture before the first IRAP picture skipped (the stream does not "
          "start at a random access point)");
    }
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
    // Motion compensation reads filtered references: without the filters every inter picture
    // would drift from the encoder's.
    if (sh.slice_type != 2 && (options.unfiltered || !filters_available()) &&
        (!sh.deblocking_disabled || sh.sao_luma || sh.sao_chroma))
      throw Unsupported(std::string("P and B slices ") +
                        (options.unfiltered ? "with unfiltered output (--unfiltered)"
                                            : "in a build without the in-loop filters") +
                        ": their references must be filtered");
    if (first) start_picture(nal, sh);
  } catch (const Error&) {
    if (first) skip_picture = true;
    throw;
  }
  if (!sh.dependent) {
    last_refs.reset();
    if (sh.slice_type != 2) {
      last_refs = std::make_shared<RefPicLists>(build_ref_lists(cur->rps, sh));
      cur->pic->inter = true;
    }
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
  cur->slices.push_back({nal, sh, last_refs, slice_index, here});
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
    // Pictures still being parsed or reconstructed read the PPS they started with: a PPS that
    // meets another SPS is copied, never changed in place.
    auto fresh = std::make_shared<Pps>(*p);
    fresh->geometry = derive_geometry(*fresh, *s);
    fresh->geometry_sps = s.get();
    pps[sh.pps_id] = std::move(fresh);
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

  // Reference picture set (8.3.2): an IRAP with NoRaslOutputFlag starts with no references.
  RefPicSet rps;
  std::vector<std::shared_ptr<DecodedPicture>> dropped;
  std::vector<std::string> missing;
  if (is_irap(nal.type) && no_rasl_output) {
    for (DpbEntry& e : dpb) dropped.push_back(std::move(e.pic));
    dpb.clear();
  } else {
    rps = apply_rps(
        dpb, sh, poc, s->log2_max_poc_lsb,
        [&](int missing_poc, bool) { return make_missing(*s, p, missing_poc); }, dropped, missing);
  }
  dropped.clear();  // before the new picture is taken: one of them may come back as it
  for (const std::string& m : missing)
    parse_problems.push_back(
        here.problem("slice header: " + m + " is missing; a grey picture stands in for it"));

  ++stream_pictures;
  cur = std::make_unique<PictureJob>();
  cur->pic = pictures.take();
  if (!spare_plans.empty()) {
    cur->plan = std::move(spare_plans.back());
    spare_plans.pop_back();
  }
  cur->pic->start(s, p);
  cur->rps = std::move(rps);
  dpb.push_back({cur->pic, false});
  cur->pic->poc = poc;
  cur->pic->decode_index = decoded++;
  cur->pic->output = sh.pic_output;
  cur->first = here;
  cur->flush_before = is_irap(nal.type) && no_rasl_output;
  cur->max_reorder = s->max_num_reorder;
  if (s->max_latency_increase_plus1 != 0)
    cur->max_latency = s->max_num_reorder + s->max_latency_increase_plus1 - 1;
  last_independent.reset();
  slice_index = -1;
  cur->hash = next_hash;
  next_hash.reset();
}

void Engine::finish_picture() {
  if (!cur) return;
  std::unique_ptr<PictureJob> job = std::move(cur);
  // Sized before the parse, which later pictures' parses may read beside it.
  job->pic->slice_refs.resize(static_cast<std::size_t>(std::max(slice_index + 1, 0)));
  job->parse_problems = std::move(parse_problems);
  parse_problems.clear();
  if (!schedule.parallel) {
    reconstruct(*job);
    if (job->ok && apply_filters(*job, schedule.filter, filters[0])) finish_frame(*job);
    emit(*job);
    return;
  }
  start_stages(std::int64_t{job->pic->sps->width} * job->pic->sps->height);
  // Motion compensation reads finished (filtered) references: an inter picture starts once the
  // pictures its slices predict from are done. Pictures that refer to none of each other (the
  // B pictures of one level of a hierarchy) reconstruct at the same time.
  // A record pipeline's workers read references' motion only, row by row as they are parsed
  // (ParseProgress); otherwise reconstruction reads their samples.
  if (job->pic->inter && !record_pipeline) wait_for_references(*job);
  // An intra picture after an intra picture (an all-intra run) parses on its worker alone: the
  // pictures of the run, which read nothing of each other, already keep every core busy side by
  // side, and their rows on the row threads besides only add steps that wait for the rows
  // above. An intra picture among inter ones, which every later picture waits for, parses by
  // rows.
  job->rows_side_by_side = job->pic->inter || !previous_intra;
  previous_intra = !job->pic->inter;
  PictureJob* j = job.get();
  j->t[0] = clock.seconds();
  flight.push_back(std::move(job));
  workers->push([this, j] { picture_task(*j); });
  if (record_pipeline) gpu_lanes[0]->push([this, j] { record_task(*j); });
  // The front end runs ahead of the stages until max_in_flight pictures are in flight.
  drain(max_in_flight);
}

void Engine::start_stages(std::int64_t luma_samples) {
  if (workers) return;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  unsigned worker_threads = threads;
  // Room for a picture per worker plus slack, so that a slow picture at the front does not idle
  // the workers while the ones behind it wait to be output.
  max_in_flight = threads + threads / 2 + 2;
  if (schedule.records) {
    // The workers of a record pipeline mostly wait: for the rows their pictures' parses left to
    // the row threads, and those rows for the rows above and the collocated pictures' rows. Each
    // picture's parse takes many times its CPU time, so the cores stay busy only with many
    // pictures in flight, each with a worker of its own.
    const auto by_size = static_cast<std::size_t>(kMaxRecordSamplesInFlight /
                                                  std::max<std::int64_t>(luma_samples, 1));
    max_in_flight = std::max(
        max_in_flight, std::min({std::size_t{3} * threads, by_size, kMaxRecordPicturesInFlight}));
    worker_threads = static_cast<unsigned>(max_in_flight);
  }
  pictures.keep(max_in_flight + kKeptPictures);
  if (schedule.records) record_pipeline = make_record_pipeline(*schedule.records);
  workers = std::make_unique<WorkQueue>(worker_threads);
  if (record_pipeline) row_threads = std::make_unique<WorkQueue>(threads);
  if (schedule.pipelined)
    for (auto& lane : gpu_lanes) lane = std::make_unique<WorkQueue>(1);
  if (record_pipeline)
    for (int k = 0; k < 2; ++k) gpu_lanes[k] = std::make_unique<WorkQueue>(1);
}

namespace {

// Runs a stage's step on a worker or lane thread: an exception (out of memory, say) drops the
// picture with a problem instead of ending the program from a thread.
template <typename Step>
void guarded(PictureJob& job, const Step& step) {
  try {
    step();
  } catch (const std::exception& e) {
    job.problems.push_back(job.first.problem("picture " + std::to_string(job.pic->decode_index) +
                                             " dropped: " + e.what()));
    job.ok = false;
  }
}

}  // namespace

// On the worker that parsed it: the picture's filter side information (megabytes of motion at
// 4K) checked and copied into pinned memory, which the GPU lane, serving every picture in turn,
// then only queues the upload of. Where no pinned memory can be had, or the filter refuses the
// side information, the lane stages it as before: the picture is still reconstructed there (later
// pictures predict from it) and dropped with the filter's message.
void Engine::stage_side_info(PictureJob& job) {
  const std::size_t bytes = filter_side_bytes(*job.pic);
  PooledStore side = side_pool.take((bytes + 1) / 2, Memory::pinned);
  if (side->memory() != Memory::pinned) return;
  try {
    stage_filter_side(*job.pic, side->data());
  } catch (const Error&) {
    return;
  }
  job.filter_side = std::move(side);
}

// On a worker: reconstruction, then the CPU filters and finishing, or the GPU stage; with a
// record pipeline, the parse alone.
void Engine::picture_task(PictureJob& job) {
  if (record_pipeline) {
    job.t[1] = clock.seconds();
    const double cpu = trace ? thread_cpu_seconds() : 0;
    guarded(job, [&] { reconstruct(job); });
    guarded(job, [&] {
      if (!job.pic->work_store) return;  // its storage could not be had: nothing to reconstruct
      RecordWork w{job.pic.get(), record_slices(job), job.ok && will_filter(job),
                   job.ok && (!options.frames_on_device || (options.check_hash && job.hash)),
                   !job.pic->inter};
      if (!w.reconstructed) job.plan.make(w);
      if (w.filter && job.pic->inter && record_pipeline->memory() == Memory::device)
        stage_side_info(job);
      w.filter_side = job.filter_side ? job.filter_side->data() : nullptr;
      job.work = std::move(w);
    });
    job.t[2] = clock.seconds();
    if (trace) job.parse_cpu = thread_cpu_seconds() - cpu;
    mark_parsed(job);
    return;
  }
  bool to_gpu = false;
  guarded(job, [&] {
    reconstruct(job);
    to_gpu = job.ok && schedule.pipelined && will_filter(job);
    if (!to_gpu && job.ok && apply_filters(job, Backend::cpu, filters[0])) finish_frame(job);
  });
  if (to_gpu) {
    gpu_lanes[job.pic->decode_index % kGpuLanes]->push([this, &job] { gpu_task(job); });
    return;
  }
  mark_done(job);
}

// On a GPU lane (the only user of its FilterRunner): the filters, then finishing (hash check
// and cropping) back on a worker, so that the lane only drives the GPU. Finishing goes ahead of
// the pictures waiting to start: it lets the oldest picture out (the front end waits on it once
// max_in_flight are in flight) and its planes back to the pool.
void Engine::gpu_task(PictureJob& job) {
  bool filtered = false;
  guarded(job, [&] {
    filtered = apply_filters(job, schedule.filter, filters[job.pic->decode_index % kGpuLanes]);
  });
  if (!filtered) {
    mark_done(job);
    return;
  }
  workers->push_front([this, &job] {
    guarded(job, [&] { finish_frame(job); });
    mark_done(job);
  });
}

// On gpu_lanes[0], in decoding order: the picture's reconstruction and filters queued once its
// parse is done; gpu_lanes[1] waits for them (the next pictures are queued meanwhile), then a
// worker finishes the picture. A picture whose parse failed is still reconstructed, its lost CTBs
// concealed: later pictures may predict from it.
void Engine::record_task(PictureJob& job) {
  {
    std::unique_lock lock(mutex);
    finished.wait(lock, [&job] { return job.parsed; });
  }
  job.t[3] = clock.seconds();
  std::function<void()> wait;
  guarded(job, [&] {
    if (!job.work.pic) return;  // nothing to reconstruct: see picture_task
    wait = record_pipeline->run(job.work, job.plan);
    if (job.work.filter) job.filtered = true;
  });
  job.t[4] = clock.seconds();
  gpu_lanes[1]->push([this, &job, wait = std::move(wait)] {
    if (wait) guarded(job, wait);
    job.filter_side.reset();  // its copy is done
    job.t[5] = clock.seconds();
    if (!job.ok) {
      mark_done(job);
      return;
    }
    workers->push_front([this, &job] {
      job.t[6] = clock.seconds();
      guarded(job, [&] { finish_frame(job); });
      job.t[7] = clock.seconds();
      mark_done(job);
    });
  });
}

std::vector<RecordSlice> Engine::record_slices(const PictureJob& job) const {
  std::vector<RecordSlice> out;
  for (const SliceJob& s : job.slices) {
    if (s.sh.dependent) continue;
    const auto i = static_cast<std::size_t>(s.slice_index);
    if (out.size() <= i) out.resize(i + 1);
    out[i] = {&s.sh, s.refs.get()};
  }
  return out;
}

void Engine::mark_parsed(PictureJob& job) {
  {
    std::lock_guard lock(mutex);
    job.parsed = true;
  }
  finished.notify_all();
}

void Engine::mark_done(PictureJob& job) {
  {
    std::lock_guard lock(mutex);
    job.parsed = job.done = true;
  }
  finished.notify_all();
}

// On the caller's thread: emits the finished pictures at the front of `flight` in decoding
// order, waiting for the front one while more than `limit` are in flight.
void Engine::drain(std::size_t limit) {
  while (!flight.empty()) {
    PictureJob& front = *flight.front();
    {
      std::unique_lock lock(mutex);
      if (flight.size() > limit)
        finished.wait(lock, [&front] { return front.done; });
      else if (!front.done)
        return;
    }
    const std::unique_ptr<PictureJob> job = std::move(flight.front());
    flight.pop_front();
    emit(*job);
  }
}

// On the caller's thread: waits until every picture in flight that a slice of `job` refers to is
// done (a reference not in flight is finished, or stands in for a missing one).
void Engine::wait_for_references(const PictureJob& job) {
  std::vector<const PictureJob*> refs;
  for (const auto& f : flight)
    for (const SliceJob& s : job.slices) {
      if (!s.refs) continue;
      bool used = false;
      for (int l = 0; l < 2 && !used; ++l)
        for (int i = 0; i < s.refs->size[l] && !used; ++i) used = s.refs->pic[l][i] == f->pic;
      if (used) {
        refs.push_back(f.get());
        break;
      }
    }
  std::unique_lock lock(mutex);
  finished.wait(lock, [&refs] {
    return std::all_of(refs.begin(), refs.end(), [](const PictureJob* r) { return r->done; });
  });
}

// Slice data into fresh planes; ok when every CTB decoded. Touches only the job (and the
// thread-safe plane pool): runs on any thread.
void Engine::reconstruct(PictureJob& job) {
  DecodedPicture& pic = *job.pic;
  // Whatever happens, later pictures waiting on this one's parse go on.
  struct Finish {
    ParseProgress& p;
    ~Finish() { p.finish(); }
  } finish{pic.progress};
  const std::size_t samples = DecodedPicture::samples(*pic.sps);
  const bool gpu = (schedule.pipelined && schedule.filter == Backend::cuda) ||
                   (record_pipeline && record_pipeline->memory() == Memory::device);
  pic.allocate(plane_pool.take(samples, gpu ? Memory::pinned : Memory::pageable));
  if (record_pipeline) pic.allocate_work(plane_pool.take(samples, record_pipeline->memory()));
  pic.progress.started();
  for (const SliceJob& s : job.slices)
    if (s.refs)
      for (int l = 0; l < 2; ++l)
        for (int i = 0; i < s.refs->size[l]; ++i)
          if (s.refs->pic[l][i]) s.refs->pic[l][i]->progress.wait_started();
  PictureParseState state;
  // With a record pipeline the parse reconstructs intra pictures only (record_pipeline.hpp).
  state.reconstruct = !record_pipeline || !pic.inter;
  const bool rows = record_pipeline && job.rows_side_by_side && job.slices.size() == 1 &&
                    wpp_rows_possible(pic, job.slices.front().sh);
  for (const SliceJob& s : job.slices) {
    try {
      if (rows)
        parse_wpp_rows(pic, s.sh, s.nal, s.slice_index, s.refs.get(), state.reconstruct,
                       *row_threads);
      else
        SliceDecoder(pic, s.sh, s.slice_index, state, s.refs.get()).decode(s.nal);
    } catch (const Error& e) {
      job.problems.push_back(s.where.problem(e.what()));
      pic.damaged = true;
    }
  }
  const int total = pic.sps->width_ctbs() * pic.sps->height_ctbs();
  if (pic.decoded_ctbs != total || pic.damaged) {
    pic.conceal_missing_ctbs();
    job.problems.push_back(job.first.problem(
        "picture " + std::to_string(pic.decode_index) + " (POC " + std::to_string(pic.poc) +
        "): " + std::to_string(total - pic.decoded_ctbs) + " of " + std::to_string(total) +
        " CTBs missing or damaged; picture dropped"));
    return;
  }
  job.ok = true;
  pic.info.deblocking = job.deblocking;  // per-edge flags close the slices that disable it
  job.filtered = !job.needs_filter;
}

bool Engine::will_filter(const PictureJob& job) const {
  return job.needs_filter && !options.unfiltered && filters_available();
}

// False (with a problem) when the filters failed: the picture is dropped.
bool Engine::apply_filters(PictureJob& job, Backend backend, FilterRunner& runner) {
  if (!will_filter(job)) return true;
  try {
    runner.apply(*job.pic, backend);
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
  {
    std::lock_guard lock(mutex);
    if (!spare_frames.empty()) {
      f = std::move(spare_frames.back());
      spare_frames.pop_back();
    }
  }
  f.hash = HashStatus::absent;
  f.hash_kind.clear();
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
    if (!job.filtered || !options.check_hash) {
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
  f.device = {};
  // On the device the frame points into the picture's own planes and keeps the picture from
  // being reused.
  if (options.frames_on_device) f.device.owner = job.pic;
  for (int c = comps; c < 3; ++c) {
    f.planes[c].clear();
    f.plane_width[c] = f.plane_height[c] = 0;
  }
  for (int c = 0; c < comps; ++c) {
    const int sh = c ? 1 : 0;
    const int x0 = s.conf_left >> sh, y0 = s.conf_top >> sh;
    const int w = f.width >> sh, h = f.height >> sh;
    f.plane_width[c] = w;
    f.plane_height[c] = h;
    if (options.frames_on_device) {
      f.planes[c].clear();
      f.device.planes[c] = pic.work_planes[c] + static_cast<std::ptrdiff_t>(y0) * pic.width[c] + x0;
      f.device.pitch[c] = pic.width[c];
      continue;
    }
    f.planes[c].resize(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y)
      std::copy_n(pic.planes[c].begin() + static_cast<std::ptrdiff_t>(y0 + y) * pic.width[c] + x0,
                  w, f.planes[c].begin() + static_cast<std::ptrdiff_t>(y) * w);
  }
}

// On the caller's thread, in decoding order: problems, then output; the planes go back to
// the pool.
void Engine::emit(PictureJob& job) {
  if (trace)
    std::fprintf(stderr,
                 "sigpu hevc picture %zu (POC %d): handed on %.1f ms, parse %.1f-%.1f (CPU "
                 "%.1f), lane %.1f-%.1f, GPU done %.1f, finishing %.1f-%.1f, emitted %.1f\n",
                 job.pic->decode_index, job.pic->poc, job.t[0] * 1e3, job.t[1] * 1e3,
                 job.t[2] * 1e3, job.parse_cpu * 1e3, job.t[3] * 1e3, job.t[4] * 1e3,
                 job.t[5] * 1e3, job.t[6] * 1e3, job.t[7] * 1e3, clock.seconds() * 1e3);
  problems.insert(problems.end(), job.parse_problems.begin(), job.parse_problems.end());
  problems.insert(problems.end(), job.problems.begin(), job.problems.end());
  if (job.flush_before) flush();
  if (job.ok && job.pic->output) output(std::move(job.frame), job.max_reorder, job.max_latency);
  if (spare_plans.size() < max_in_flight + 2) spare_plans.push_back(std::move(job.plan));
}

// 8.3.3.2: a picture of mid-grey samples with no motion (intra), never output.
std::shared_ptr<DecodedPicture> Engine::make_missing(const Sps& s, const std::shared_ptr<Pps>& p,
                                                     int poc) {
  std::shared_ptr<DecodedPicture> pic = pictures.take();
  pic->start(sps[p->sps_id], p);
  pic->allocate(plane_pool.take(DecodedPicture::samples(s), Memory::pageable));
  for (int c = 0; c < 3; ++c)
    std::fill(pic->planes[c].begin(), pic->planes[c].end(),
              static_cast<std::uint16_t>(1 << ((c ? s.bit_depth_chroma : s.bit_depth_luma) - 1)));
  std::fill(pic->motion.begin(), pic->motion.end(), MvField{});
  if (schedule.records) {
    start_stages(std::int64_t{s.width} * s.height);
    pic->allocate_work(plane_pool.take(DecodedPicture::samples(s), record_pipeline->memory()));
    record_pipeline->grey(*pic);
  }
  pic->progress.finish();
  pic->poc = poc;
  pic->decode_index = decoded++;
  pic->generated = true;
  pic->output = false;
  return pic;
}

// The bumping process (C.5.2.3): a picture goes out, smallest POC first, while more are waiting
// than sps_max_num_reorder_pics or one has waited SpsMaxLatencyPictures pictures.
void Engine::output(Frame&& f, int max_reorder, int max_latency) {
  for (int& l : latency) ++l;
  waiting.push_back(std::move(f));
  latency.push_back(0);
  auto over_latency = [&] {
    return max_latency > 0 &&
           std::any_of(latency.begin(), latency.end(), [&](int l) { return l >= max_latency; });
  };
  while (!waiting.empty() && (static_cast<int>(waiting.size()) > max_reorder || over_latency())) {
    const auto it = std::min_element(waiting.begin(), waiting.end(),
                                     [](const Frame& a, const Frame& b) { return a.poc < b.poc; });
    const auto k = it - waiting.begin();
    deliver(*it);
    ++stream_frames;
    recycle(std::move(*it));
    waiting.erase(it);
    latency.erase(latency.begin() + k);
  }
}

void Engine::recycle(Frame&& f) {
  f.device = {};  // the picture goes back to the decoder's pool
  std::lock_guard lock(mutex);
  if (spare_frames.size() < max_in_flight + 2) spare_frames.push_back(std::move(f));
}

void Engine::flush() {
  std::sort(waiting.begin(), waiting.end(),
            [](const Frame& a, const Frame& b) { return a.poc < b.poc; });
  for (Frame& f : waiting) {
    deliver(f);
    ++stream_frames;
    recycle(std::move(f));
  }
  waiting.clear();
  latency.clear();
}

}  // namespace sigpu::hevc
