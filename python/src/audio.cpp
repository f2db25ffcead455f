// sigpu.audio: the real-time effect graph run over blocks of samples from Python.
#include <sigpu/audio.hpp>

#include "array.hpp"
#include "modules.hpp"

namespace sigpu::python {

namespace audio = sigpu::audio;

namespace {

/// An Engine with the graph it runs; set up when made.
class PyEngine {
 public:
  PyEngine(const audio::Graph& graph, const audio::EngineOptions& o)
      : graph_(graph), engine_(graph_, o) {
    engine_.setup();
  }

  /// (inputs, frames) float32, frames a multiple of the period, to (outputs, frames).
  Array process(py::handle block) {
    HostView v = host_view(block, dl_type<float>());
    if (v.dtype.code != kDLFloat || v.dtype.bits != 32)
      throw UsageError("audio blocks are float32, not " + dtype_name(v.dtype));
    if (v.shape.size() != 2 || v.shape[0] != engine_.inputs())
      throw UsageError("a block is (channels, frames) with " + std::to_string(engine_.inputs()) +
                       " channels, the graph's inputs");
    const std::int64_t frames = v.shape[1], period = engine_.period();
    if (frames % period)
      throw UsageError("a block's frames (" + std::to_string(frames) +
                       ") must be a multiple of the period (" + std::to_string(period) + ")");
    const int outs = engine_.outputs();
    std::vector<float> out(std::size_t(outs) * frames);
    {
      py::gil_scoped_release nogil;
      const float* in = v.as<float>().data();
      std::vector<const float*> ip(engine_.inputs());
      std::vector<float*> op(outs);
      for (std::int64_t p = 0; p < frames; p += period) {
        for (int c = 0; c < engine_.inputs(); ++c) ip[c] = in + c * frames + p;
        for (int c = 0; c < outs; ++c) op[c] = out.data() + c * frames + p;
        engine_.process(ip.data(), op.data());
      }
    }
    return host_array(std::move(out), {outs, frames});
  }

  audio::Engine& engine() { return engine_; }
  const audio::Graph& graph() const { return graph_; }

 private:
  audio::Graph graph_;
  audio::Engine engine_;
};

audio::Graph load_graph(py::handle graph, const audio::Variables& vars) {
  if (py::isinstance<py::dict>(graph)) {
    auto text = py::module_::import("json").attr("dumps")(graph).cast<std::string>();
    return audio::Graph::parse(text, vars);
  }
  if (py::isinstance<py::str>(graph)) {
    auto s = graph.cast<std::string>();
    if (s.find_first_not_of(" \t\r\n") != std::string::npos &&
        s[s.find_first_not_of(" \t\r\n")] == '{')
      return audio::Graph::parse(s, vars);
    return audio::Graph::load(s, vars);
  }
  if (py::hasattr(graph, "__fspath__"))
    return audio::Graph::load(py::module_::import("os").attr("fspath")(graph).cast<std::string>(),
                              vars);
  throw UsageError("a graph is a path, JSON text or a dict");
}

}  // namespace

void init_audio(py::module_& m) {
  m.doc() = "A real-time signal graph of audio effects on the CPU or the GPU.";

  py::class_<PyEngine>(m, "Engine", R"doc(
Runs an effect graph (docs/audio.md) over blocks of float32 samples, one period at a time.

graph: a graph file's path, its JSON text, or the same as a dict; variables override the
graph's own. device: "auto", "cpu" (serial), "cpu-parallel" or "cuda".
)doc")
      .def(py::init([](py::handle graph, const std::string& device, int period, double sample_rate,
                       unsigned threads, const audio::Variables& variables) {
             audio::EngineOptions o;
             if (device == "cpu-parallel") {
               o.backend = Backend::cpu_parallel;
             } else if (device == "cpu") {
               o.backend = Backend::cpu;
             } else {
               const Placement where = parse_device(device);
               o.backend = where.cuda ? Backend::cuda : Backend::cpu_parallel;
             }
             o.period = period;
             o.sample_rate = sample_rate;
             o.threads = threads;
             audio::Graph g = load_graph(graph, variables);
             py::gil_scoped_release nogil;
             return std::make_unique<PyEngine>(g, o);
           }),
           py::arg("graph"), py::kw_only(), py::arg("device") = "auto", py::arg("period") = 128,
           py::arg("sample_rate") = 48000.0, py::arg("threads") = 0u,
           py::arg("variables") = audio::Variables{})
      .def("process", &PyEngine::process, py::arg("block"), R"doc(
Processes a block (inputs, frames) of float32 (frames a multiple of the period; NumPy or any
DLPack array) and returns the output block (outputs, frames). State carries over between calls.
)doc")
      .def(
          "update",
          [](PyEngine& e, const std::string& node, const std::string& param, double value) {
            e.engine().update(node, param, value);
          },
          py::arg("node"), py::arg("param"), py::arg("value"),
          "Changes a parameter; it takes effect at the next period, ramped where a jump clicks.")
      .def_property_readonly("inputs", [](PyEngine& e) { return e.engine().inputs(); })
      .def_property_readonly("outputs", [](PyEngine& e) { return e.engine().outputs(); })
      .def_property_readonly("period", [](PyEngine& e) { return e.engine().period(); })
      .def_property_readonly("sample_rate", [](PyEngine& e) { return e.engine().sample_rate(); })
      .def_property_readonly(
          "backend", [](PyEngine& e) { return std::string(to_string(e.engine().backend())); })
      .def_property_readonly("nodes", [](const PyEngine& e) { return e.graph().nodes(); });
}

}  // namespace sigpu::python
