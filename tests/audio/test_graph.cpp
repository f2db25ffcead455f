// Graph files: the examples load, and bad input gives an error naming node and port/parameter.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "audio/console.hpp"
#include "util.hpp"

namespace audio = sigpu::audio;
using sigpu::test::audio::source_path;

namespace {

/// The message of the Error that parsing (and configuring at 48 kHz) throws, or "".
std::string error_of(const std::string& json) {
  try {
    audio::Engine e(audio::Graph::parse(json), {.backend = sigpu::Backend::cpu});
  } catch (const sigpu::Error& err) {
    return err.what();
  }
  return "";
}

std::string chain(const std::string& nodes, const std::string& outputs = "\"b\"") {
  std::string json = R"({"inputs": 2, "nodes": [)";
  json.append(nodes).append(R"(], "outputs": )").append(outputs).append("}");
  return json;
}

}  // namespace

TEST(AudioGraph, ExamplesLoad) {
  for (const char* f : {"guitar.json", "console.json", "sends.json"}) {
    const auto g = audio::Graph::load(source_path(std::string("examples/audio/") + f));
    EXPECT_GT(g.outputs(), 0) << f;
  }
  const auto console = audio::Graph::load(source_path("examples/audio/console.json"), {{"N", 16}});
  EXPECT_EQ(console.inputs(), 16);
  EXPECT_EQ(console.outputs(), 4);
}

TEST(AudioGraph, ConsoleExampleIsTheBenchmarkConsole) {
  std::ifstream f(source_path("examples/audio/console.json"));
  std::stringstream s;
  s << f.rdbuf();
  EXPECT_EQ(nlohmann::json::parse(s.str()), nlohmann::json::parse(audio::console_json()));
  EXPECT_EQ(audio::console_graph(64).inputs(), 64);
  EXPECT_EQ(audio::console_graph(64).outputs(), 16);
}

TEST(AudioGraph, MalformedJsonNamesThePosition) {
  const auto e = error_of(R"({"inputs": 2, "nodes": [)");
  EXPECT_NE(e.find("malformed JSON"), std::string::npos) << e;
  EXPECT_NE(e.find("line 1, column"), std::string::npos) << e;
  EXPECT_NE(error_of(std::string(100, '[') + std::string(100, ']')).find("nesting"),
            std::string::npos);
}

TEST(AudioGraph, UnknownEffectAndParameter) {
  auto e = error_of(chain(R"({"id": "b", "type": "flanger", "input": "in"})"));
  EXPECT_NE(e.find("node 'b': unknown effect type 'flanger'"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "gain", "input": "in", "params": {"gian_db": 1}})"));
  EXPECT_NE(e.find("node 'b' parameter 'gian_db': unknown parameter"), std::string::npos) << e;
}

TEST(AudioGraph, OutOfRangeValuesNameNodeAndParameter) {
  auto e = error_of(chain(R"({"id": "b", "type": "compressor", "input": "in",
                              "params": {"ratio": -2}})"));
  EXPECT_NE(e.find("node 'b' parameter 'ratio': -2 is out of range"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "eq", "input": "in",
                         "params": {"bands": [{"type": "peak", "freq": 1000},
                                              {"type": "highshelf", "freq": 30000}]}})"));
  EXPECT_NE(e.find("node 'b' parameter 'band.1.freq': 30000 Hz is not below Nyquist"),
            std::string::npos)
      << e;
  e = error_of(chain(R"({"id": "b", "type": "eq", "input": "in",
                         "params": {"bands": [{"type": "wobble", "freq": 100}]}})"));
  EXPECT_NE(e.find("node 'b' parameter 'band.0.type'"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "gain", "input": "in", "params": {"gain_db": "x"}})"));
  EXPECT_NE(e.find("node 'b' parameter 'gain_db': a number is expected"), std::string::npos) << e;
}

TEST(AudioGraph, CyclesAreNamed) {
  const auto e = error_of(chain(R"({"id": "a", "type": "gain", "input": ["in:0", "c"]},
                                   {"id": "c", "type": "gain", "input": "b:0"},
                                   {"id": "b", "type": "mixer", "input": "a",
                                    "params": {"outputs": 2}})"));
  EXPECT_NE(e.find("cycle"), std::string::npos) << e;
  EXPECT_NE(e.find("'a'"), std::string::npos) << e;
  EXPECT_NE(e.find("'b'"), std::string::npos) << e;
  EXPECT_NE(e.find("'c'"), std::string::npos) << e;
}

TEST(AudioGraph, ChannelCountMismatches) {
  auto e = error_of(chain(R"({"id": "b", "type": "pan", "input": ["in", "in:0"]})"));
  EXPECT_NE(e.find("node 'b' port 'input': pan takes 1 or 2 channels, 3"), std::string::npos) << e;
  e = error_of(R"({"inputs": 3, "nodes": [{"id": "b", "type": "compressor", "input": "in",
                   "sidechain": "in:0-1"}], "outputs": "b"})");
  EXPECT_NE(e.find("node 'b' port 'sidechain': 2 channels routed"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "mixer", "input": "in",
                         "params": {"matrix": [[1, 0, 0]]}})"));
  EXPECT_NE(e.find("node 'b' port 'input': matrix[0] must have one gain per input"),
            std::string::npos)
      << e;
  e = error_of(chain(R"({"id": "b", "type": "gain", "input": "in:2"})"));
  EXPECT_NE(e.find("node 'b' port 'input': 'in:2' names channel 2 but 'in' has 2 channels"),
            std::string::npos)
      << e;
}

TEST(AudioGraph, DanglingPorts) {
  auto e = error_of(chain(R"({"id": "b", "type": "gain", "input": "nowhere"})"));
  EXPECT_NE(e.find("node 'b' port 'input': 'nowhere' refers to an unknown node"), std::string::npos)
      << e;
  e = error_of(chain(R"({"id": "b", "type": "gain", "input": "in"},
                        {"id": "x", "type": "gain", "input": "in"})"));
  EXPECT_NE(e.find("node 'x' port 'output' is dangling"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "gain", "input": "in"})", "\"nowhere\""));
  EXPECT_NE(e.find("graph outputs: 'nowhere' refers to an unknown node"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "gain"})"));
  EXPECT_NE(e.find("node 'b' port 'input' is not connected"), std::string::npos) << e;
  e = error_of(chain(R"({"id": "b", "type": "gain", "input": "in", "sidechain": "in"})"));
  EXPECT_NE(e.find("node 'b' port 'sidechain': a gain has no side-chain"), std::string::npos) << e;
}

TEST(AudioGraph, VariablesAndExpressions) {
  const std::string json = R"({"variables": {"N": 8}, "inputs": "N",
    "nodes": [{"id": "m", "type": "mixer", "input": "in", "params": {"outputs": "N/2 + 1"}}],
    "outputs": "m"})";
  EXPECT_EQ(audio::Graph::parse(json).outputs(), 5);
  EXPECT_EQ(audio::Graph::parse(json, {{"N", 32}}).outputs(), 17);
  EXPECT_THROW(audio::Graph::parse(json, {{"M", 32}}), sigpu::Error);
  const std::string bad = R"({"inputs": "N", "nodes": [], "outputs": "in"})";
  try {
    audio::Graph::parse(bad);
    FAIL();
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown variable 'N'"), std::string::npos) << e.what();
  }
}
