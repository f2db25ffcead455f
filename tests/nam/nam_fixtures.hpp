// The NAM fixtures (tests/data/nam) and the DI input, for the nam tests.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace sigpu::test {

/// tests/data/nam/<name>, found through $SIGPU_SOURCE_DIR (the GPU machine) or the source
/// tree this binary was built from.
std::filesystem::path nam_fixture(const std::string& name);
/// The three models the issue names.
std::vector<std::string> nam_model_fixtures();
/// tests/data/nam/input.wav as float samples (read with libsndfile); empty when this build
/// has no libsndfile.
std::vector<float> nam_di_input();
/// The largest |a - b| in dBFS (-inf as -400).
double max_error_dbfs(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace sigpu::test
