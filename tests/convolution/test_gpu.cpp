// The CUDA convolver against the CPU one (-100 dBFS), reset, and CUDA-graph replay.
#include <gtest/gtest.h>

#include <sigpu/convolution.hpp>

#include "convolution/reference.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <string>

#include "core/cuda/buffer.hpp"

namespace cv = sigpu::convolution;
using sigpu::test::Channels;
using sigpu::test::frames_for;
using sigpu::test::Input;
using sigpu::test::kMaxError;

namespace {

/// Streams `in` through the CUDA convolver, one process() per period, on `stream`.
Channels stream_gpu(cv::CudaConvolver& conv, const Channels& in, cudaStream_t stream) {
  const std::size_t B = conv.partition(), frames = in[0].size();
  Channels out(conv.outputs(), std::vector<float>(frames));
  sigpu::cuda::PinnedBuffer<float> h_in(B * conv.inputs()), h_out(B * conv.outputs());
  sigpu::cuda::DeviceBuffer<float> d_in(B * conv.inputs()), d_out(B * conv.outputs());
  for (std::size_t t = 0; t + B <= frames; t += B) {
    for (std::size_t c = 0; c < conv.inputs(); ++c)
      std::copy_n(in[c].begin() + t, B, h_in.get() + c * B);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(d_in.get(), h_in.get(), B * conv.inputs() * 4,
                                     cudaMemcpyHostToDevice, stream));
    conv.process(d_in.get(), d_out.get(), stream);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(h_out.get(), d_out.get(), B * conv.outputs() * 4,
                                     cudaMemcpyDeviceToHost, stream));
    SIGPU_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t c = 0; c < conv.outputs(); ++c)
      std::copy_n(h_out.get() + c * B, B, out[c].begin() + t);
  }
  return out;
}

void expect_gpu_matches_cpu(const cv::Config& c, const std::string& what) {
  sigpu::cuda::Stream stream;
  const std::size_t frames = frames_for(c);
  for (Input kind : {Input::impulse, Input::noise, Input::music}) {
    const Channels in = sigpu::test::make_input(kind, c.inputs, frames, 11);
    cv::CpuConvolver cpu(c, 0);
    cv::CudaConvolver gpu(c);
    const double err = sigpu::test::max_abs_diff(sigpu::test::stream_cpu(cpu, in),
                                                 stream_gpu(gpu, in, stream.get()));
    EXPECT_LE(err, kMaxError) << what << " input " << static_cast<int>(kind) << ": "
                              << sigpu::test::dbfs(err) << " dBFS";
  }
}

bool have_device() {
  return !sigpu::cuda_devices().empty();
}

}  // namespace

TEST(ConvolutionGpu, MonoMatchesCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  for (std::uint32_t B : {16u, 32u, 128u, 1024u, 8192u})
    for (std::size_t taps : {std::size_t{1}, std::size_t{777}, std::size_t{4096}})
      expect_gpu_matches_cpu(sigpu::test::mono_config(B, taps),
                             "mono B = " + std::to_string(B) + " taps = " + std::to_string(taps));
}

TEST(ConvolutionGpu, StereoMatchesCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const cv::Config m2s{.partition = 64,
                       .inputs = 1,
                       .outputs = 2,
                       .irs = {sigpu::test::make_ir(3000, 1), sigpu::test::make_ir(2000, 2)},
                       .paths = {{0, 0, 0}, {0, 1, 1}}};
  expect_gpu_matches_cpu(m2s, "mono to stereo");
  expect_gpu_matches_cpu(sigpu::test::true_stereo_config(128, 6000), "true stereo");
}

TEST(ConvolutionGpu, LongIrAndManyChannelsMatchCpu) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  expect_gpu_matches_cpu(sigpu::test::mono_config(128, 65536), "65536 taps");
  expect_gpu_matches_cpu(sigpu::test::many_channels_config(32, 48, 40, 96, 61), "96 paths");
}

TEST(ConvolutionGpu, TenSecondIrMatchesDirect) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const cv::Config c = sigpu::test::mono_config(512, cv::kMaxIrTaps);
  const std::size_t frames = frames_for(c, 1);
  sigpu::cuda::Stream stream;
  cv::CudaConvolver gpu(c);
  const Channels in = sigpu::test::make_input(Input::music, 1, frames, 5);
  const Channels out = stream_gpu(gpu, in, stream.get());
  const double err =
      sigpu::test::max_error_vs_direct(c, in, out, sigpu::test::check_frames(frames, 256));
  EXPECT_LE(err, kMaxError) << sigpu::test::dbfs(err) << " dBFS";
}

TEST(ConvolutionGpu, ResetClearsHistory) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const cv::Config c = sigpu::test::true_stereo_config(64, 1500);
  const Channels a = sigpu::test::make_input(Input::noise, 2, 64 * 40, 1);
  const Channels b = sigpu::test::make_input(Input::music, 2, 64 * 40, 2);
  sigpu::cuda::Stream stream;
  cv::CudaConvolver used(c), fresh(c);
  stream_gpu(used, a, stream.get());
  used.reset(stream.get());
  EXPECT_EQ(stream_gpu(used, b, stream.get()), stream_gpu(fresh, b, stream.get()));
}

TEST(ConvolutionGpu, GraphReplayMatchesDirectCalls) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const cv::Config c = sigpu::test::true_stereo_config(32, 2000);
  const std::size_t B = c.partition, periods = 120;
  const Channels in = sigpu::test::make_input(Input::music, 2, B * periods, 3);
  sigpu::cuda::Stream stream;
  cv::CudaConvolver direct(c), graphed(c);
  const Channels want = stream_gpu(direct, in, stream.get());

  sigpu::cuda::DeviceBuffer<float> d_in(2 * B), d_out(2 * B);
  sigpu::cuda::PinnedBuffer<float> h_in(2 * B), h_out(2 * B);
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  SIGPU_CUDA_CHECK(cudaStreamBeginCapture(stream.get(), cudaStreamCaptureModeThreadLocal));
  graphed.process(d_in.get(), d_out.get(), stream.get());
  SIGPU_CUDA_CHECK(cudaStreamEndCapture(stream.get(), &graph));
  SIGPU_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  Channels got(2, std::vector<float>(B * periods));
  for (std::size_t t = 0; t < periods; ++t) {
    for (std::size_t ch = 0; ch < 2; ++ch)
      std::copy_n(in[ch].begin() + t * B, B, h_in.get() + ch * B);
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(d_in.get(), h_in.get(), 2 * B * 4, cudaMemcpyHostToDevice, stream.get()));
    SIGPU_CUDA_CHECK(cudaGraphLaunch(exec, stream.get()));
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(h_out.get(), d_out.get(), 2 * B * 4, cudaMemcpyDeviceToHost, stream.get()));
    stream.synchronize();
    for (std::size_t ch = 0; ch < 2; ++ch)
      std::copy_n(h_out.get() + ch * B, B, got[ch].begin() + t * B);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  const double diff = sigpu::test::max_abs_diff(want, got);
  EXPECT_EQ(diff, 0.0) << sigpu::test::dbfs(diff) << " dBFS";
  const double err =
      sigpu::test::max_error_vs_direct(c, in, got, sigpu::test::check_frames(B * periods));
  EXPECT_LE(err, kMaxError) << sigpu::test::dbfs(err) << " dBFS";
}

TEST(ConvolutionGpu, BadConfigRefusedBeforeTouchingDevice) {
  cv::Config c = sigpu::test::mono_config(32, 10);
  c.paths[0].output = 3;
  try {
    cv::CudaConvolver conv(c);
    FAIL() << "accepted a bad config";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("paths[0].output = 3"), std::string::npos) << e.what();
  }
}

#endif  // SIGPU_HAVE_CUDA
