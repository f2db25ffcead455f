// The CUDA kernels' code run on the CPU: kernel_agents.hpp executed thread by thread over a
// packed batch (batch_pack.hpp), exactly as cuda/kernels.cuh runs it, must give the CPU
// decoder's frames and damage reports. This checks the kernels' slice placement, coefficient
// layout and block indexing without a GPU; the GPU tests (*ProresGpu*) check the device.
#include <gtest/gtest.h>

#include <vector>

#include <sigpu/prores.hpp>

#include "prores/batch_pack.hpp"
#include "prores/clips.hpp"
#include "prores/frame_parse.hpp"
#include "prores/kernel_agents.hpp"
#include "prores/tables.hpp"

namespace sigpu::prores {
namespace {

struct TwinResult {
  std::vector<std::uint16_t> out;
  std::vector<Damage> damage;
  std::size_t frame_samples = 0;
};

TwinResult run_twin(const std::vector<std::span<const std::uint8_t>>& spans, int depth) {
  std::vector<ParsedFrame> parsed;
  std::vector<std::uint64_t> numbers;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    parsed.push_back(parse_frame(spans[i], depth));
    numbers.push_back(i);
  }
  const PackedBatch b = plan_batch(spans, parsed);
  std::vector<std::uint8_t> upload(b.upload_size + 16);
  pack_batch(b, spans, parsed, upload.data());
  std::vector<std::int16_t> coeffs(b.coeffs(), 0);
  std::vector<std::uint32_t> mb_info(b.mbs(), 0);
  TwinResult r;
  r.frame_samples = b.frame_samples;
  // Poisoned output: every sample must be written by the kernels.
  r.out.assign(b.frames * b.frame_samples, 0xDEAD);
  std::vector<std::uint8_t> status(4 * b.total_slices, 0);
  const VldParams vp{upload.data(),
                     reinterpret_cast<const SliceDesc*>(upload.data() + b.slices_at),
                     reinterpret_cast<const FrameDesc*>(upload.data() + b.frames_at),
                     static_cast<int>(b.total_slices),
                     b.layout,
                     coeffs.data(),
                     mb_info.data(),
                     r.out.data(),
                     static_cast<std::int64_t>(b.frame_samples),
                     status.data()};
  for (std::size_t t = 0; t < b.vld_threads(); ++t) vld_agent(vp, static_cast<int>(t));
  const IdctParams ip{coeffs.data(), mb_info.data(), vp.frames,
                      b.layout,      r.out.data(),   static_cast<std::int64_t>(b.frame_samples)};
  // The IDCT kernel's thread blocks: the tile's load, rows, columns, then the stores in their
  // permuted order.
  const std::uint8_t* scan = b.layout.shape.interlaced ? kInterlacedScan : kProgressiveScan;
  for (int f = 0; f < static_cast<int>(b.frames); ++f)
    for (std::int64_t tile_index = 0; tile_index < b.layout.tiles_per_frame(); ++tile_index) {
      int plane;
      std::int64_t in_plane;
      idct_tile(b.layout, tile_index, plane, in_plane);
      const std::int64_t first = in_plane * kTileBlocks;
      IdctTile tile{};
      for (int thread = 0; thread < 8 * kTileBlocks; ++thread)
        if (plane < 3) idct_load_agent(ip, f, plane, in_plane, thread, scan, tile);
      for (int local = 0; local < kTileBlocks; ++local) {
        const IdctTask t = idct_task(ip, f, plane, first + local);
        if (!t.coded) continue;
        for (int row = 0; row < 8; ++row) {
          if (depth == 10)
            idct_row_agent<10>(ip, t, row, tile[local] + 8 * row);
          else
            idct_row_agent<12>(ip, t, row, tile[local] + 8 * row);
        }
        for (int col = 0; col < 8; ++col) {
          if (depth == 10)
            idct_col<10>(tile[local] + col, 8);
          else
            idct_col<12>(tile[local] + col, 8);
        }
      }
      for (int thread = 0; thread < 8 * kTileBlocks; ++thread) {
        int block, row;
        idct_store_slot(plane, b.layout.shape.chroma444, thread, block, row);
        const IdctTask t = idct_task(ip, f, plane, first + block);
        if (depth == 10)
          idct_store_agent<10>(ip, t, row, tile[block] + 8 * row);
        else
          idct_store_agent<12>(ip, t, row, tile[block] + 8 * row);
      }
    }
  report_batch_status(parsed, numbers, status.data(), r.damage);
  return r;
}

void expect_twin_matches_cpu(const std::vector<std::span<const std::uint8_t>>& spans, int depth,
                             const std::string& what) {
  const TwinResult twin = run_twin(spans, depth);
  DecodeReport cpu_report;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const Frame f = decode_frame(spans[i], depth, cpu_report, {.backend = Backend::cpu}, i);
    ASSERT_EQ(f.samples.size(), twin.frame_samples);
    EXPECT_TRUE(std::equal(f.samples.begin(), f.samples.end(),
                           twin.out.begin() + static_cast<std::ptrdiff_t>(i * twin.frame_samples)))
        << what << " frame " << i;
  }
  ASSERT_EQ(twin.damage.size(), cpu_report.damage.size()) << what;
  for (std::size_t i = 0; i < twin.damage.size(); ++i)
    EXPECT_EQ(twin.damage[i].message(), cpu_report.damage[i].message());
}

class ProresKernelTwin : public ::testing::TestWithParam<testing::ClipSpec> {};

TEST_P(ProresKernelTwin, MatchesCpuDecoder) {
  if (GetParam().name.starts_with("large_")) GTEST_SKIP() << "covered by odd sizes; slow here";
  const auto path = testing::find_clip(GetParam());
  if (path.empty()) GTEST_SKIP() << "clip not available";
  const Clip clip = open_file(path.string());
  std::vector<std::vector<std::uint8_t>> held;
  for (std::size_t i = 0; i < clip.frames.size(); ++i)
    held.push_back(testing::frame_bytes(clip, i));
  std::vector<std::span<const std::uint8_t>> spans(held.begin(), held.end());
  spans.push_back(held[0]);  // the same frame twice in a batch
  expect_twin_matches_cpu(spans, clip.bit_depth(parse_frame_header(spans[0])), GetParam().name);
}

INSTANTIATE_TEST_SUITE_P(Clips, ProresKernelTwin, ::testing::ValuesIn(testing::standard_clips()),
                         [](const auto& info) { return info.param.name; });

TEST(ProresKernelTwinStores, EveryBlockRowStoredOnce) {
  for (int plane = 0; plane < 4; ++plane)
    for (int chroma444 = 0; chroma444 < 2; ++chroma444) {
      std::vector<int> seen(8 * kTileBlocks, 0);
      for (int thread = 0; thread < 8 * kTileBlocks; ++thread) {
        int block, row;
        idct_store_slot(plane, chroma444, thread, block, row);
        ASSERT_TRUE(block >= 0 && block < kTileBlocks && row >= 0 && row < 8);
        ++seen[8 * block + row];
      }
      for (int n : seen) EXPECT_EQ(n, 1) << "plane " << plane << " chroma444 " << chroma444;
    }
}

TEST(ProresKernelTwinDamage, DamagedSlicesMatchCpu) {
  for (const auto& spec : testing::standard_clips()) {
    if (spec.name != "ks_p3" && spec.name != "ks_4444_alpha16" && spec.name != "ks_tff") continue;
    const auto path = testing::find_clip(spec);
    if (path.empty()) GTEST_SKIP() << "clip not available";
    const Clip clip = open_file(path.string());
    std::vector<std::uint8_t> f = testing::frame_bytes(clip, 0);
    const std::vector<std::uint8_t> f1 = testing::frame_bytes(clip, 1);
    const int depth = clip.bit_depth(parse_frame_header(f));
    const ParsedFrame pf = parse_frame(f, depth);
    const SliceRef& a = pf.slices[3];
    std::fill(f.begin() + a.offset + 8, f.begin() + a.offset + a.size, 0);
    f[pf.slices[9].offset + 2] = 0xFF;
    f.resize(pf.slices[pf.slices.size() - 5].offset + 10);
    const std::vector<std::span<const std::uint8_t>> spans = {f1, f};
    expect_twin_matches_cpu(spans, depth, spec.name);
  }
}

}  // namespace
}  // namespace sigpu::prores
