// Decoding on the GPU on real x265 streams, intra and inter: the CUDA filters after the CPU's
// reconstruction (P and B pictures predicting from the pictures the GPU filtered and handed
// back), and the record pipeline reconstructing and filtering every picture on the GPU (its
// references in device memory), both giving the CPU decoder's pictures with every hash matched,
// and the same pictures and problems on damaged streams. Runs on the GPU machine from the
// streams its bundle carries.
#include <gtest/gtest.h>
#include <functional>

#include <random>

#include <sigpu/hevc.hpp>

#include "hevc/nal.hpp"
#include "hevc/schedule.hpp"
#include "hevc/streams.hpp"

namespace sigpu::hevc {
namespace {

std::vector<Frame> decode_all(const std::vector<std::uint8_t>& data, Backend b,
                              std::vector<Problem>& problems) {
  std::vector<Frame> out;
  Decoder dec({.backend = b});
  dec.decode(data, [&](const Frame& f) { out.push_back(f); });
  problems = dec.problems();
  return out;
}

std::vector<Frame> decode_with_schedule(const std::vector<std::uint8_t>& data, const Schedule& s,
                                        std::vector<Problem>& problems) {
  std::vector<Frame> out;
  problems = decode_with(s, {}, data, [&](const Frame& f) { out.push_back(f); });
  return out;
}

// The x265 test streams that need the filters, where they can be had (the bundle, the cache, or
// made with x265).
std::vector<testing::StreamSpec> filtered_streams() {
  std::vector<testing::StreamSpec> specs = testing::standard_streams();
  specs.insert(specs.end(), testing::inter_streams().begin(), testing::inter_streams().end());
  std::erase_if(specs, [](const testing::StreamSpec& spec) {
    return !spec.filtered() || testing::stream_path(spec).empty();
  });
  return specs;
}

// Calls check(spec, stream, the CPU decoder's frames) for each of filtered_streams(): the
// tests that compare a GPU decode with the CPU's on the x265 streams. Skips the calling test
// where no device, no filters or no streams are there.
void compare_on_filtered_streams(
    const std::function<void(const testing::StreamSpec&, const std::vector<std::uint8_t>&,
                             const std::vector<Frame>&)>& check) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!Decoder::filters_available()) GTEST_SKIP() << "no hevc_filter module in this build";
  int compared = 0;
  for (const auto& spec : filtered_streams()) {
    const auto data = testing::read_file(testing::stream_path(spec));
    std::vector<Problem> pc;
    check(spec, data, decode_all(data, Backend::cpu, pc));
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no cached streams (make them with x265, bundle hevc-streams)";
  std::printf("compared %d streams\n", compared);
}

const Schedule kGpuSchedules[] = {
    {.parallel = true, .pipelined = true, .filter = Backend::cuda},
    {.parallel = true, .records = Backend::cuda},
};

TEST(HevcDecodeGpu, CudaSchedulesMatchCpuOnX265Streams) {
  compare_on_filtered_streams([](const testing::StreamSpec& spec,
                                 const std::vector<std::uint8_t>& data,
                                 const std::vector<Frame>& cpu) {
    for (const Schedule& s : kGpuSchedules) {
      SCOPED_TRACE(s.records ? "record pipeline" : "pipelined filters");
      std::vector<Problem> pg;
      const auto gpu = decode_with_schedule(data, s, pg);
      EXPECT_TRUE(pg.empty()) << spec.name << ": " << (pg.empty() ? "" : pg.front().message);
      ASSERT_EQ(cpu.size(), gpu.size()) << spec.name;
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_EQ(gpu[i].hash, HashStatus::matched) << spec.name << " picture " << i;
        for (int c = 0; c < 3; ++c)
          EXPECT_TRUE(cpu[i].planes[c] == gpu[i].planes[c]) << spec.name << " plane " << c;
      }
    }
  });
}

// Frames left on the device (cropped streams among them: a pitch and an offset into the
// picture's planes), every one taken by the sink and held while the later pictures decode, then
// copied down: the CPU decoder's pictures, with the hashes checked where asked.
TEST(HevcDecodeGpu, FramesLeftOnTheDeviceAreTheCpuPictures) {
  compare_on_filtered_streams([](const testing::StreamSpec& spec,
                                 const std::vector<std::uint8_t>& data,
                                 const std::vector<Frame>& cpu) {
    for (const bool check : {true, false}) {
      std::vector<Frame> held;
      Decoder dec({.backend = Backend::cuda, .frames_on_device = true, .check_hash = check});
      dec.decode(data, [&](Frame& f) {
        EXPECT_TRUE(f.planes[0].empty() && f.device.planes[0] && f.device.owner) << spec.name;
        held.emplace_back();
        std::swap(held.back(), f);
      });
      EXPECT_TRUE(dec.problems().empty()) << spec.name;
      ASSERT_EQ(cpu.size(), held.size()) << spec.name;
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_EQ(held[i].hash, check ? HashStatus::matched : HashStatus::unchecked) << spec.name;
        EXPECT_GE(held[i].device.pitch[0], held[i].width) << spec.name;
        copy_to_host(held[i]);
        EXPECT_EQ(held[i].device.planes[0], nullptr);
        for (int c = 0; c < 3; ++c)
          EXPECT_TRUE(cpu[i].planes[c] == held[i].planes[c])
              << spec.name << " picture " << i << " plane " << c;
      }
    }
  });
}

// Bytes flipped in inter streams' slices: lost CTBs concealed on the device, pictures dropped or
// reported, the same frames and problems as the CPU decoder's.
TEST(HevcDecodeGpu, RecordPipelineMatchesCpuOnDamagedStreams) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!Decoder::filters_available()) GTEST_SKIP() << "no hevc_filter module in this build";
  int compared = 0;
  for (const auto& spec : testing::inter_streams()) {
    const auto path = testing::stream_path(spec);
    if (path.empty() || compared >= 4) continue;
    const auto data = testing::read_file(path);
    std::vector<NalSpan> slices;
    for (const NalSpan& n : split_annexb(data))
      if (((data[n.begin] >> 1) & 0x3f) < 32 && n.end - n.begin > 64) slices.push_back(n);
    std::mt19937 rng(5);
    for (int trial = 0; trial < 4; ++trial) {
      auto bad = data;
      for (int k = 0; k < 4; ++k) {
        const NalSpan& n = slices[rng() % slices.size()];
        bad[n.begin + 32 + rng() % 32] ^= static_cast<std::uint8_t>(1 + rng() % 255);
      }
      std::vector<Problem> pc, pg;
      const auto cpu = decode_with_schedule(bad, schedule_for(Backend::cpu), pc);
      const auto gpu = decode_with_schedule(bad, kGpuSchedules[1], pg);
      ASSERT_EQ(cpu.size(), gpu.size()) << spec.name << " trial " << trial;
      for (std::size_t i = 0; i < cpu.size(); ++i) {
        EXPECT_EQ(gpu[i].hash, cpu[i].hash) << spec.name << " picture " << i;
        for (int c = 0; c < 3; ++c)
          EXPECT_TRUE(cpu[i].planes[c] == gpu[i].planes[c]) << spec.name << " plane " << c;
      }
      ASSERT_EQ(pc.size(), pg.size()) << spec.name << " trial " << trial;
      for (std::size_t i = 0; i < pc.size(); ++i) EXPECT_EQ(pc[i].message, pg[i].message);
    }
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no cached streams (make them with x265, bundle hevc-streams)";
}

}  // namespace
}  // namespace sigpu::hevc
