// Bad configs are refused with a message naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include <sigpu/convolution.hpp>

namespace cv = sigpu::convolution;

namespace {

cv::Config good() {
  return {.partition = 32,
          .inputs = 2,
          .outputs = 2,
          .irs = {{1.0f, 0.5f}, {0.25f}},
          .paths = {{0, 0, 0}, {1, 1, 1}}};
}

/// The message of the Error that validate() and the CPU constructor throw (both must).
std::string rejection(const cv::Config& c) {
  std::string msg;
  try {
    cv::validate(c);
  } catch (const sigpu::Error& e) {
    msg = e.what();
  }
  EXPECT_THROW(cv::CpuConvolver{c}, sigpu::Error);
  return msg;
}

}  // namespace

TEST(ConvolutionConfig, GoodConfigAccepted) {
  EXPECT_NO_THROW(cv::validate(good()));
  cv::Config c = good();
  c.irs[0].assign(cv::kMaxIrTaps, 0.0f);
  c.partition = cv::kMaxPartition;
  EXPECT_NO_THROW(cv::validate(c));
  c.partition = cv::kMinPartition;
  EXPECT_NO_THROW(cv::validate(c));
}

TEST(ConvolutionConfig, BadPartitionNamed) {
  for (std::uint32_t B : {0u, 8u, 100u, 16384u}) {
    cv::Config c = good();
    c.partition = B;
    EXPECT_NE(rejection(c).find("partition = " + std::to_string(B)), std::string::npos);
  }
}

TEST(ConvolutionConfig, BadChannelCountsNamed) {
  cv::Config c = good();
  c.inputs = 0;
  EXPECT_NE(rejection(c).find("inputs = 0"), std::string::npos);
  c = good();
  c.outputs = 0;
  EXPECT_NE(rejection(c).find("outputs = 0"), std::string::npos);
}

TEST(ConvolutionConfig, BadIrsNamed) {
  cv::Config c = good();
  c.irs.clear();
  EXPECT_NE(rejection(c).find("irs is empty"), std::string::npos);
  c = good();
  c.irs[1].clear();
  EXPECT_NE(rejection(c).find("irs[1] is empty"), std::string::npos);
  c = good();
  c.irs[1].assign(cv::kMaxIrTaps + 1, 0.0f);
  EXPECT_NE(rejection(c).find("irs[1] has 480001 taps"), std::string::npos);
  c = good();
  c.irs[0][1] = std::nanf("");
  EXPECT_NE(rejection(c).find("irs[0][1] is not finite"), std::string::npos);
}

TEST(ConvolutionConfig, BadPathsNamed) {
  cv::Config c = good();
  c.paths.clear();
  EXPECT_NE(rejection(c).find("paths is empty"), std::string::npos);
  c = good();
  c.paths[1].input = 2;
  EXPECT_NE(rejection(c).find("paths[1].input = 2 is out of range (inputs = 2)"),
            std::string::npos);
  c = good();
  c.paths[0].ir = 5;
  EXPECT_NE(rejection(c).find("paths[0].ir = 5"), std::string::npos);
  c = good();
  c.paths[1].output = 7;
  EXPECT_NE(rejection(c).find("paths[1].output = 7"), std::string::npos);
}

TEST(ConvolutionConfig, DryNeedsMatchingChannels) {
  cv::Config c = good();
  c.outputs = 3;
  c.dry = 0.5f;
  EXPECT_NE(rejection(c).find("dry = 0.5 needs inputs == outputs"), std::string::npos);
  c = good();
  c.wet = INFINITY;
  EXPECT_NE(rejection(c).find("wet is not finite"), std::string::npos);
}

#ifndef SIGPU_HAVE_CUDA
TEST(ConvolutionConfig, CudaBackendRefusesInCpuOnlyBuild) {
  EXPECT_THROW(cv::CudaConvolver{good()}, sigpu::Error);
}
#endif
