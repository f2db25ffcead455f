// The NAM fixtures (NeuralAmpModelerCore's test models and DI input, in the shared fixtures
// folder, not in the repository) for the nam tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

namespace sigpu::test {

/// The shared fixtures folder: $SIGPU_FIXTURES_DIR, else the one this build was configured with
/// (CMake's SIGPU_FIXTURES_DIR, by default ../shared/fixtures beside the source tree).
std::filesystem::path fixtures_dir();
/// <fixtures>/nam/<name>.
std::filesystem::path nam_fixture(const std::string& name);
/// Whether <fixtures>/nam is there.
bool have_nam_fixtures();
/// The three models the issue names.
std::vector<std::string> nam_model_fixtures();
/// <fixtures>/nam/input.wav as float samples (read with libsndfile); empty when this build
/// has no libsndfile or the file is absent.
std::vector<float> nam_di_input();
/// A music-like input made here, the same on every machine: 0.25 s at 48 kHz of four plucked
/// strings (Karplus-Strong) struck 40 ms apart, peak below 0.8.
std::vector<float> nam_music_input();
/// The bar for CUDA against the CPU: -100 dBFS (1e-5), or 100 dB below the reference's peak
/// where it exceeds full scale (sums in another order differ by ulps of the largest values).
double gpu_tolerance(const std::vector<float>& want);
/// <fixtures>/nam-a2/<name>.
std::filesystem::path nam_a2_fixture(const std::string& name);
/// The largest |a - b| in dBFS (-inf as -400).
double max_error_dbfs(const std::vector<float>& a, const std::vector<float>& b);
/// The CPU reference (nam::Processor) over x, period by period; at sample switch_at it is
/// asked for `size` (slimmable models).
std::vector<float> nam_cpu_run(const nam::Model& m, const std::vector<float>& x, int period,
                               long switch_at = -1, double size = 1.0);
/// A CudaBatch of the models over their inputs, period by period; at sample switch_at instance
/// i is asked for sizes[i].
std::vector<std::vector<float>> nam_gpu_run(const std::vector<const nam::Model*>& models,
                                            const std::vector<std::vector<float>>& in, int period,
                                            bool shared_weights = true, long switch_at = -1,
                                            const std::vector<double>& sizes = {});

}  // namespace sigpu::test

/// Skips the current test, naming the folder, when the NAM fixtures are absent.
#define SIGPU_SKIP_WITHOUT_NAM_FIXTURES()                                                         \
  do {                                                                                            \
    if (!::sigpu::test::have_nam_fixtures())                                                      \
      GTEST_SKIP() << "NAM fixtures absent: " << (::sigpu::test::fixtures_dir() / "nam").string() \
                   << " (set SIGPU_FIXTURES_DIR to the shared fixtures folder)";                  \
  } while (false)
