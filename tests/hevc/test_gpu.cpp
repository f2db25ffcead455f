// The CUDA filters on real x265 streams, intra and inter (whose P and B pictures predict from
// the pictures the GPU filtered and handed back): the same pictures as the CPU filters, every
// hash matched. Runs on the GPU machine from the streams its bundle carries.
#include <gtest/gtest.h>

#include <sigpu/hevc.hpp>

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

TEST(HevcDecodeGpu, CudaFiltersMatchCpuOnX265Streams) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!Decoder::filters_available()) GTEST_SKIP() << "no hevc_filter module in this build";
  int compared = 0;
  std::vector<testing::StreamSpec> specs = testing::standard_streams();
  specs.insert(specs.end(), testing::inter_streams().begin(), testing::inter_streams().end());
  for (const auto& spec : specs) {
    if (!spec.filtered()) continue;
    const auto path = testing::stream_path(spec);
    if (path.empty()) continue;
    const auto data = testing::read_file(path);
    std::vector<Problem> pc, pg;
    const auto cpu = decode_all(data, Backend::cpu, pc);
    const auto gpu = decode_all(data, Backend::cuda, pg);
    EXPECT_TRUE(pg.empty()) << spec.name << ": " << (pg.empty() ? "" : pg.front().message);
    ASSERT_EQ(cpu.size(), gpu.size()) << spec.name;
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      EXPECT_EQ(gpu[i].hash, HashStatus::matched) << spec.name << " picture " << i;
      for (int c = 0; c < 3; ++c)
        EXPECT_TRUE(cpu[i].planes[c] == gpu[i].planes[c]) << spec.name << " plane " << c;
    }
    ++compared;
  }
  if (compared == 0) GTEST_SKIP() << "no cached streams (make them with x265, bundle hevc-streams)";
  std::printf("compared %d streams\n", compared);
}

}  // namespace
}  // namespace sigpu::hevc
