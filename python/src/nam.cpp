// sigpu.nam: Neural Amp Modeler models run over NumPy/DLPack signals.
#include <sigpu/nam.hpp>

#include "array.hpp"
#include "modules.hpp"

namespace sigpu::python {

namespace nam = sigpu::nam;

namespace {

HostView signal(py::handle x, std::size_t dims) {
  HostView v = host_view(x, dl_type<float>());
  if (v.dtype.code != kDLFloat || v.dtype.bits != 32)
    throw UsageError("signals are float32, not " + dtype_name(v.dtype));
  if (v.shape.size() != dims)
    throw UsageError(dims == 1 ? "a signal is one-dimensional (frames,)"
                               : "a batch's signal is (instances, frames)");
  return v;
}

/// Many instances on the CPU (all cores) or one GPU, one signal each.
class Batch {
 public:
  Batch(const std::vector<const nam::Model*>& models, const Placement& where, double rate,
        int max_frames) {
    if (where.cuda)
      gpu_ = std::make_unique<nam::CudaBatch>(
          models,
          nam::CudaOptions{.sample_rate = rate, .max_frames = max_frames, .device = where.index});
    else
      cpu_ = std::make_unique<nam::CpuBatch>(
          models, nam::Options{.sample_rate = rate, .max_frames = max_frames});
    size_ = int(models.size());
    max_frames_ = max_frames;
  }

  Array process(py::handle x) {
    HostView v = signal(x, 2);
    if (v.shape[0] != size_)
      throw UsageError("the batch has " + std::to_string(size_) + " instances, the signal " +
                       std::to_string(v.shape[0]) + " rows");
    const std::int64_t frames = v.shape[1];
    std::vector<float> out(v.size());
    {
      py::gil_scoped_release nogil;
      std::vector<const float*> in(size_);
      std::vector<float*> op(size_);
      for (std::int64_t p = 0; p < frames; p += max_frames_) {
        const int n = int(std::min<std::int64_t>(max_frames_, frames - p));
        for (int i = 0; i < size_; ++i) {
          in[i] = v.as<float>().data() + i * frames + p;
          op[i] = out.data() + i * frames + p;
        }
        if (gpu_)
          gpu_->process_host(in.data(), op.data(), n);
        else
          cpu_->process(in.data(), op.data(), n);
      }
    }
    return host_array(std::move(out), v.shape);
  }

  void reset() {
    if (gpu_)
      gpu_->reset();
    else
      cpu_->reset();
  }
  int size() const { return size_; }

 private:
  std::unique_ptr<nam::CpuBatch> cpu_;
  std::unique_ptr<nam::CudaBatch> gpu_;
  int size_ = 0, max_frames_ = 0;
};

}  // namespace

void init_nam(py::module_& m) {
  m.doc() = "Neural Amp Modeler (.nam) models on the CPU and the GPU, many instances at once.";

  py::class_<nam::Model>(m, "Model", "A parsed .nam file.")
      .def(py::init([](py::handle path) {
             auto p = py::module_::import("os").attr("fspath")(path).cast<std::string>();
             py::gil_scoped_release nogil;
             return nam::load(p);
           }),
           py::arg("path"), "Loads a .nam file (JSON, versions 0.5.x to 0.7.x).")
      .def_static(
          "parse",
          [](const std::string& json, const std::string& source) {
            return nam::parse(json, source);
          },
          py::arg("json"), py::arg("source") = "<string>", "A model from the file's text.")
      .def_property_readonly(
          "architecture",
          [](const nam::Model& m) { return std::string(nam::to_string(m.architecture)); })
      .def_readonly("name", &nam::Model::name)
      .def_readonly("version", &nam::Model::version)
      .def_readonly("source", &nam::Model::source)
      .def_readonly("sample_rate", &nam::Model::sample_rate)
      .def_readonly("loudness_db", &nam::Model::loudness_db)
      .def_property_readonly("receptive_field", &nam::Model::receptive_field)
      .def(
          "normalized",
          [](const nam::Model& m, double target_db) { return nam::normalized(m, target_db); },
          py::arg("target_db") = -18.0,
          "A copy whose output level makes the metadata loudness target_db.")
      .def("__repr__", [](const nam::Model& m) {
        return "<sigpu.nam.Model " + std::string(nam::to_string(m.architecture)) + " " + m.source +
               ">";
      });

  py::class_<nam::Processor>(m, "Processor", R"doc(
One model instance on the CPU, streaming: consecutive calls continue one signal, and any split
of it gives bit-identical output.
)doc")
      .def(py::init([](const nam::Model& model, double sample_rate, int max_frames) {
             py::gil_scoped_release nogil;
             return std::make_unique<nam::Processor>(
                 model, nam::Options{.sample_rate = sample_rate, .max_frames = max_frames});
           }),
           py::arg("model"), py::kw_only(), py::arg("sample_rate") = 48000.0,
           py::arg("max_frames") = 4096)
      .def(
          "process",
          [](nam::Processor& p, py::handle x) {
            HostView v = signal(x, 1);
            std::vector<float> out(v.size());
            {
              py::gil_scoped_release nogil;
              p.process(v.as<float>().data(), out.data(), int(out.size()));
            }
            return host_array(std::move(out), v.shape);
          },
          py::arg("x"), "Runs a float32 signal (frames,) through the model.")
      .def("reset", &nam::Processor::reset, "Back to the freshly pre-warmed state.")
      .def("set_size", &nam::Processor::set_size, py::arg("size"),
           "A slimmable model's size, 0..1 (1: the largest); crossfades, no click.");

  py::class_<Batch>(m, "Batch", R"doc(
Many instances at once, instance i running models[i]: on all CPU cores, or on one GPU where
every instance advances in one kernel launch per period (models of one shape; WaveNet, LSTM).
)doc")
      .def(py::init([](const std::vector<const nam::Model*>& models, const std::string& device,
                       double sample_rate, int max_frames) {
             const Placement where = parse_device(device);
             py::gil_scoped_release nogil;
             return std::make_unique<Batch>(models, where, sample_rate, max_frames);
           }),
           py::arg("models"), py::kw_only(), py::arg("device") = "auto",
           py::arg("sample_rate") = 48000.0, py::arg("max_frames") = 128, py::keep_alive<1, 2>())
      .def("process", &Batch::process, py::arg("x"),
           "Runs (instances, frames) float32, row i through instance i, in periods of at most "
           "max_frames.")
      .def("reset", &Batch::reset)
      .def("__len__", &Batch::size);
}

}  // namespace sigpu::python
