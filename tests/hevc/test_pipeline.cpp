// The cuda backend's scheduler: pictures stream through the decoder's workers and, once
// reconstructed, through the filter stage (GPU lanes), then back to a worker for the hash check,
// while the front end parses the next ones. Decoded here with the CPU filter in the stage (the
// same scheduler code, no GPU), it must give what cpu-parallel gives: the same frames in the
// same order, the same hash results and the same problems in the same order, on clean and on
// damaged streams long enough to fill the bound on pictures in flight several times. The work
// queue and the plane pool it is built on are checked alone first.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include <sigpu/hevc.hpp>

#include "core/thread_pool.hpp"
#include "hevc/nal.hpp"
#include "hevc/picture.hpp"
#include "hevc/plane_pool.hpp"
#include "hevc/recycler.hpp"
#include "hevc/schedule.hpp"
#include "hevc/streams.hpp"
#include "hevc/work_queue.hpp"
#include "hevc/wpp_rows.hpp"

namespace sigpu::hevc {
namespace {

using testing::StreamSpec;

const Schedule kPipelinedCpu{.parallel = true, .pipelined = true, .filter = Backend::cpu};
// The GPU's record pipeline schedule with the stages' CPU twins.
const Schedule kRecordsCpu{.parallel = true, .records = Backend::cpu};

struct Decoded {
  std::vector<Frame> frames;
  std::vector<std::string> problems;
};

Decoded run(const std::vector<std::uint8_t>& data, const Schedule& s) {
  Decoded r;
  const auto problems = decode_with(s, {}, data, [&](const Frame& f) { r.frames.push_back(f); });
  for (const auto& p : problems) r.problems.push_back(p.message);
  return r;
}

void expect_same(const Decoded& a, const Decoded& b, const std::string& what) {
  ASSERT_EQ(a.frames.size(), b.frames.size()) << what;
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    EXPECT_EQ(a.frames[i].poc, b.frames[i].poc) << what << " frame " << i;
    EXPECT_EQ(a.frames[i].decode_index, b.frames[i].decode_index) << what << " frame " << i;
    EXPECT_EQ(a.frames[i].hash, b.frames[i].hash) << what << " frame " << i;
    for (int c = 0; c < 3; ++c)
      EXPECT_TRUE(a.frames[i].planes[c] == b.frames[i].planes[c]) << what << " frame " << i;
  }
  EXPECT_EQ(a.problems, b.problems) << what;
}

// An x265 stream repeated until it holds more than three pictures per worker: each copy starts
// with an IDR, so every picture is decodable and output order runs across the copies.
std::vector<std::uint8_t> long_stream(const StreamSpec& spec) {
  const auto one = testing::read_file(testing::stream_path(spec));
  const std::size_t copies = 3 * ThreadPool::shared().size() / spec.frames + 2;
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i < copies; ++i) out.insert(out.end(), one.begin(), one.end());
  return out;
}

const StreamSpec& spec_named(const std::string& name) {
  for (const auto& s : testing::standard_streams())
    if (s.name == name) return s;
  throw std::runtime_error("no standard stream " + name);
}

// Tasks pushed from outside and from tasks all run, on the queue's threads, before it joins.
TEST(HevcPipeline, WorkQueueRunsEveryTaskBeforeJoining) {
  std::atomic<int> ran{0}, nested{0};
  {
    WorkQueue queue(3);
    for (int i = 0; i < 200; ++i)
      queue.push([&] {
        if (++ran % 10 == 0) queue.push([&] { ++nested; });
      });
  }
  EXPECT_EQ(ran, 200);
  EXPECT_EQ(nested, 20);
}

// With its one thread busy, the tasks queued meanwhile run: those pushed to the front, the last
// first; then those with a priority, the lowest first (a WPP row of an older picture before any
// row of a younger one), equal ones in the order queued; then the others in the order queued.
// Tasks queued by tasks run too.
TEST(HevcPipeline, WorkQueueRunsFrontThenPriorityThenInOrder) {
  std::vector<char> order;  // the one thread's alone
  std::mutex gate;
  {
    WorkQueue queue(1);
    std::unique_lock hold(gate);
    // The thread is taken before anything else is queued (else it could run any of them first).
    std::promise<void> taken;
    queue.push([&] {
      taken.set_value();
      std::lock_guard wait(gate);
    });
    taken.get_future().wait();
    auto note = [&order](char c) { return [&order, c] { order.push_back(c); }; };
    queue.push(note('a'));
    queue.push_front(note('b'));
    queue.push(row_priority(3, 7), note('c'));
    queue.push(row_priority(3, 2), note('d'));
    queue.push(row_priority(9, 0), [&] {
      order.push_back('e');
      queue.push(note('z'));
    });
    queue.push_front(note('f'));
    queue.push(row_priority(3, 2), note('g'));
    queue.push(note('h'));
    queue.push(row_priority(2, 4000), note('i'));
    hold.unlock();
  }
  EXPECT_EQ(std::string(order.begin(), order.end()), "fbidgceahz");
}

// A waiter on a picture's parse is called once its rows are parsed, or when the parse ends short
// of them; one asking for rows already parsed is told so and not kept.
TEST(HevcPipeline, ParseProgressCallsWaitersWhenTheirRowsAreParsed) {
  ParseProgress progress;
  progress.reset();
  std::vector<int> called;
  EXPECT_FALSE(progress.when_rows(2, [&] { called.push_back(2); }));
  EXPECT_FALSE(progress.when_rows(5, [&] { called.push_back(5); }));
  progress.rows(1);
  EXPECT_TRUE(called.empty());
  progress.rows(3);
  EXPECT_EQ(called, std::vector<int>{2});
  EXPECT_TRUE(progress.when_rows(3, [&] { called.push_back(-1); }));
  progress.finish();
  EXPECT_EQ(called, (std::vector<int>{2, 5}));
}

// A store dropped by its owner is taken again for a picture of the same size, not for another
// size; a build or machine without pinned memory hands out ordinary stores when asked for
// pinned ones.
TEST(HevcPipeline, PlanePoolReusesStoresOfTheSameSize) {
  PlanePool pool;
  auto a = pool.take(1000, Memory::pageable);
  std::uint16_t* const first = a->data();
  a->data()[999] = 7;  // the whole size is writable
  a.reset();
  auto b = pool.take(1000, Memory::pageable);
  EXPECT_EQ(b->data(), first);
  auto c = pool.take(1000, Memory::pageable);
  EXPECT_NE(c->data(), first);
  b.reset();
  auto d = pool.take(2000, Memory::pageable);
  EXPECT_EQ(d->size(), 2000u);
  EXPECT_EQ(d->memory(), Memory::pageable);
  auto e = pool.take(500, Memory::pinned);
  EXPECT_EQ(e->size(), 500u);
  if (cuda_devices().empty()) {
    EXPECT_EQ(e->memory(), Memory::pageable);
    EXPECT_THROW(pool.take(500, Memory::device), Error);
  }
}

// The last owner of a picture's store may be anywhere (a later picture's reference list, say):
// wherever the picture goes, its stores go back to the pool; one that outlives the pool is
// freed.
TEST(HevcPipeline, PlanePoolTakesBackStoresOfDroppedPictures) {
  PooledStore outlives;
  std::uint16_t* held = nullptr;
  {
    PlanePool pool;
    auto pic = std::make_shared<DecodedPicture>();
    pic->store = pool.take(4096, Memory::pageable);
    held = pic->store->data();
    auto reference_list = std::vector<std::shared_ptr<DecodedPicture>>{pic};
    pic.reset();
    reference_list.clear();  // the picture's last owner
    auto again = pool.take(4096, Memory::pageable);
    EXPECT_EQ(again->data(), held);
    outlives = pool.take(4096, Memory::pageable);
  }
  outlives.reset();  // freed, the pool being gone (AddressSanitizer checks the rest)
  EXPECT_FALSE(outlives);
}

// A picture comes back for reuse whoever drops it last and on whichever thread, tidied (its
// stores let go of) and with its vectors' storage; no more are kept than asked; one that
// outlives the recycler is deleted.
TEST(HevcPipeline, RecyclerTakesBackObjectsDroppedAnywhere) {
  std::shared_ptr<DecodedPicture> outlives;
  {
    PlanePool pool;
    Recycler<DecodedPicture> pictures([](DecodedPicture& p) { p.store.reset(); });
    pictures.keep(1);
    auto pic = pictures.take();
    pic->store = pool.take(4096, Memory::pageable);
    pic->motion.assign(1000, MvField{});
    const DecodedPicture* first = pic.get();
    const MvField* storage = pic->motion.data();
    auto reference_list = std::vector<std::shared_ptr<DecodedPicture>>{pic};
    pic.reset();
    std::thread([list = std::move(reference_list)]() mutable { list.clear(); }).join();
    auto again = pictures.take();
    EXPECT_EQ(again.get(), first);
    EXPECT_FALSE(again->store);
    EXPECT_EQ(again->motion.data(), storage);
    auto other = pictures.take();
    EXPECT_NE(other.get(), first);
    again.reset();
    other.reset();  // beyond keep(1): deleted
    EXPECT_EQ(pictures.take().get(), first);
    outlives = pictures.take();
  }
  outlives.reset();  // deleted, the recycler being gone (AddressSanitizer checks the rest)
  EXPECT_FALSE(outlives);
}

TEST(HevcPipeline, CudaBackendReconstructsOnTheGpuOrPipelinesCpuBackendsDoNeither) {
  EXPECT_FALSE(schedule_for(Backend::cpu).pipelined);
  EXPECT_FALSE(schedule_for(Backend::cpu_parallel).pipelined);
  EXPECT_EQ(schedule_for(Backend::cuda).records, Backend::cuda);
  EXPECT_TRUE(schedule_for(Backend::cuda, false).pipelined);
  EXPECT_EQ(schedule_for(Backend::cuda, false).filter, Backend::cuda);
}

TEST(HevcPipeline, SameFramesOrderAndHashesAsCpuParallel) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "this build has no hevc_filter module";
  for (const char* name : {"filt8_ctu16", "filt10_ctu64", "slices4"}) {
    const auto data = long_stream(spec_named(name));
    const Decoded a = run(data, schedule_for(Backend::cpu_parallel));
    ASSERT_GT(a.frames.size(), 3 * ThreadPool::shared().size()) << name;
    for (const Schedule& s : {kPipelinedCpu, kRecordsCpu}) {
      const Decoded b = run(data, s);
      for (const Frame& f : b.frames) {
        EXPECT_EQ(f.hash, HashStatus::matched) << name;
        EXPECT_TRUE(f.filtered) << name;
      }
      EXPECT_TRUE(b.problems.empty()) << name;
      expect_same(a, b, name);
    }
  }
}

// Damage among pictures in flight: dropped pictures, problems from parsing (attached to the
// next picture handed on) and from reconstruction come out in the same order either way.
TEST(HevcPipeline, SameProblemsAndFramesOnDamagedStreams) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "this build has no hevc_filter module";
  const auto data = long_stream(spec_named("filt8_ctu16"));
  std::vector<NalSpan> slices;
  for (const NalSpan& n : split_annexb(data))
    if (((data[n.begin] >> 1) & 0x3f) < 32 && n.end - n.begin > 64) slices.push_back(n);
  std::mt19937 rng(11);
  int reported = 0;
  for (int trial = 0; trial < 12; ++trial) {
    auto bad = data;
    // Slice headers (problems while parsing) and slice data (problems while reconstructing).
    for (int k = 0; k < 6; ++k) {
      const NalSpan& n = slices[rng() % slices.size()];
      const std::size_t at = k % 2 ? n.begin + 2 + rng() % 6 : n.begin + 32 + rng() % 32;
      bad[at] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    }
    const Decoded a = run(bad, schedule_for(Backend::cpu_parallel));
    const Decoded b = run(bad, kPipelinedCpu);
    reported += !b.problems.empty();
    expect_same(a, b, "trial " + std::to_string(trial));
    expect_same(a, run(bad, kRecordsCpu), "records, trial " + std::to_string(trial));
  }
  EXPECT_GT(reported, 6);
}

}  // namespace
}  // namespace sigpu::hevc
