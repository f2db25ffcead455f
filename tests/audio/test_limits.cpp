// Graph files past the documented limits (include/sigpu/audio.hpp) are refused before the
// memory they ask for is allocated, with an InputError that names the limit.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sigpu/audio.hpp>

#include "util.hpp"

namespace audio = sigpu::audio;
using sigpu::test::audio::source_path;

namespace {

/// `n` gain nodes in a chain, as a graph text.
std::string gain_chain(std::size_t n) {
  std::ostringstream json;
  json << R"({"inputs": 1, "nodes": [)";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) json << ",\n";
    json << R"({"id": "g)" << i << R"(", "type": "gain", "input": ")";
    if (i)
      json << 'g' << i - 1;
    else
      json << "in";
    json << "\"}";
  }
  json << R"(], "outputs": "g)" << n - 1 << "\"}";
  return json.str();
}

/// The InputError's message for `json`; fails the test for any other outcome.
std::string input_error(const std::string& json) {
  try {
    audio::Graph::parse(json);
    ADD_FAILURE() << "parsed";
  } catch (const sigpu::InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not an InputError: " << e.what();
  }
  return "";
}

std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sigpu_limits_" + std::to_string(getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace

TEST(AudioLimits, NodeCountAtTheLimitLoadsAndOnePastIsRefused) {
  EXPECT_EQ(audio::Graph::parse(gain_chain(audio::kMaxGraphNodes)).nodes().size(),
            audio::kMaxGraphNodes);
  const std::string e = input_error(gain_chain(audio::kMaxGraphNodes + 1));
  EXPECT_NE(e.find("graph: more than 4096 nodes"), std::string::npos) << e;
}

TEST(AudioLimits, NodeCountIsRefusedWhileParsing) {
  // Cut off after the nodes: had the whole text been parsed first, this would be malformed JSON.
  std::string json = gain_chain(audio::kMaxGraphNodes + 1);
  json.resize(json.rfind(']'));
  const std::string e = input_error(json);
  EXPECT_NE(e.find("more than 4096 nodes"), std::string::npos) << e;
}

TEST(AudioLimits, AMillionNodesAreRefusedBeforeParsing) {
  std::string json = R"({"inputs": 1, "nodes": [)";
  for (int i = 0; i < 1000000; ++i) json += "{},";
  json += R"({}], "outputs": "in"})";
  const std::string e = input_error(json);
  EXPECT_NE(e.find("bytes, more than the limit of 1048576"), std::string::npos) << e;
}

TEST(AudioLimits, ValueCount) {
  // Under 1 MiB of text but 300000 values: stopped as the tree grows.
  std::string values = "0";
  for (int i = 0; i < 300000; ++i) values += ",0";
  const std::string json = R"({"inputs": 1, "nodes": [{"id": "r", "type": "router", "input": "in",
    "params": {"map": [)" + values +
                           R"(]}}], "outputs": "r"})";
  ASSERT_LT(json.size(), audio::kMaxGraphBytes);
  const std::string e = input_error(json);
  EXPECT_NE(e.find("more than 262144 JSON values"), std::string::npos) << e;
}

TEST(AudioLimits, Depth) {
  const std::string deep = std::string(40, '[') + std::string(40, ']');
  const std::string e = input_error(R"({"inputs": 1, "name": )" + deep + "}");
  EXPECT_NE(e.find("nesting deeper than 32 at byte 53"), std::string::npos) << e;
}

TEST(AudioLimits, MalformedJsonNamesTheByte) {
  const std::string e = input_error(R"({"inputs": 1, "nodes": [}])");
  EXPECT_NE(e.find("malformed JSON at byte 25"), std::string::npos) << e;
  // Semantic errors are InputErrors too.
  const std::string cycle =
      input_error(R"({"inputs": 1, "nodes": [{"id": "a", "type": "gain", "input": "in"}],
                     "outputs": "b"})");
  EXPECT_NE(cycle.find("unknown node 'b'"), std::string::npos) << cycle;
}

TEST(AudioLimits, LoadReadsNoMoreThanTheLimit) {
  const std::string big = temp_file("big.json", std::string(audio::kMaxGraphBytes + 10, ' '));
  try {
    audio::Graph::load(big);
    ADD_FAILURE() << "loaded";
  } catch (const sigpu::InputError& e) {
    const std::string s = e.what();
    EXPECT_NE(s.find(big + ": graph: larger than the limit of 1048576 bytes"), std::string::npos)
        << s;
  }
  std::filesystem::remove(big);
  // An endless input is refused, not read whole.
  if (std::filesystem::exists("/dev/zero")) {
    EXPECT_THROW(audio::Graph::load("/dev/zero"), sigpu::InputError);
  }
  EXPECT_THROW(audio::Graph::load(std::filesystem::temp_directory_path().string()),
               sigpu::InputError);
  EXPECT_THROW(audio::Graph::load("/nonexistent/graph.json"), sigpu::InputError);
}

TEST(AudioLimits, LoadKeepsTheErrorClassAndNamesTheFile) {
  const std::string bad = temp_file("bad.json", R"({"inputs": 1, "nodes": [)");
  try {
    audio::Graph::load(bad);
    ADD_FAILURE() << "loaded";
  } catch (const sigpu::InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(bad + ": graph: malformed JSON at byte", 0), 0u)
        << e.what();
  }
  std::filesystem::remove(bad);
}

TEST(AudioLimits, DelayLinesPastTheLimitAreRefusedAtSetup) {
  // 65536 channels of 10 s lines at 48 kHz: 3.1e10 samples, past 2^32 (the offsets wrapped).
  const auto g = audio::Graph::parse(R"({"inputs": 65536, "nodes": [{"id": "d", "type": "delay",
    "input": "in", "params": {"time_ms": 10000, "max_time_ms": 10000}}], "outputs": "d"})");
  audio::Engine engine(g, {.backend = sigpu::Backend::cpu, .period = 1});
  try {
    engine.setup();
    ADD_FAILURE() << "set up";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("delay lines exceed 1073741824 samples"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(engine.ready());
}
