// sigpu.prores: a ProRes clip (MOV or raw frames) decoded into frames of planes, batch by batch.
#include <sigpu/prores.hpp>

#include <deque>

#include "array.hpp"
#include "modules.hpp"

namespace sigpu::python {

namespace prores = sigpu::prores;

namespace {

struct PyFrame {
  std::uint64_t index = 0;
  int width = 0, height = 0;
  std::string format, scan;
  std::vector<Array> planes;
};

std::string scan_name(prores::Scan s) {
  switch (s) {
    case prores::Scan::top_field_first:
      return "top_field_first";
    case prores::Scan::bottom_field_first:
      return "bottom_field_first";
    default:
      return "progressive";
  }
}

/// Planes as arrays (rows, plane width) viewing the frame's samples, which they share.
PyFrame to_python(prores::Frame&& f, std::uint64_t index) {
  PyFrame out{index, f.width, f.height, f.format.name(), scan_name(f.scan), {}};
  auto samples = std::make_shared<std::vector<std::uint16_t>>(std::move(f.samples));
  std::size_t offset = 0;
  for (int p = 0; p < f.format.planes(); ++p) {
    const std::size_t n = f.plane_size(p), w = std::size_t(f.plane_width(p));
    Array a;
    a.owner = samples;
    a.data = samples->data() + offset;
    a.shape = {std::int64_t(n / w), std::int64_t(w)};
    a.dtype = dl_type<std::uint16_t>();
    out.planes.push_back(std::move(a));
    offset += n;
  }
  return out;
}

/// Decodes a clip `batch` frames at a time as the caller iterates.
class Frames {
 public:
  Frames(prores::Clip clip, prores::DecodeOptions o) : clip_(std::move(clip)), options_(o) {}

  PyFrame next() {
    if (ready_.empty()) {
      if (next_ >= clip_.frames.size()) throw py::stop_iteration();
      const std::size_t count =
          std::min<std::size_t>(std::max(options_.batch, 1), clip_.frames.size() - next_);
      prores::Decoded d;
      {
        py::gil_scoped_release nogil;
        d = prores::decode(clip_, options_, next_, count);
      }
      for (auto& dmg : d.report.damage) damage_.push_back(dmg.message());
      for (std::size_t i = 0; i < d.frames.size(); ++i)
        ready_.push_back(to_python(std::move(d.frames[i]), clip_.first_frame + next_ + i));
      next_ += count;
    }
    PyFrame f = std::move(ready_.front());
    ready_.pop_front();
    return f;
  }
  std::size_t size() const { return clip_.frames.size(); }
  const prores::Clip& clip() const { return clip_; }
  const std::vector<std::string>& damage() const { return damage_; }

 private:
  prores::Clip clip_;
  prores::DecodeOptions options_;
  std::size_t next_ = 0;
  std::deque<PyFrame> ready_;
  std::vector<std::string> damage_;
};

}  // namespace

void init_prores(py::module_& m) {
  m.doc() = "Apple ProRes decoding (every profile, alpha, interlaced), bit-exact with FFmpeg.";

  py::class_<PyFrame>(m, "Frame", R"doc(
One decoded frame: planes Y, Cb, Cr (and A) as uint16 arrays (rows, plane width) in FFmpeg's
pixel formats (yuv422p10le, yuv444p12le, yuva444p12le).
)doc")
      .def_readonly("index", &PyFrame::index)
      .def_readonly("width", &PyFrame::width)
      .def_readonly("height", &PyFrame::height)
      .def_readonly("format", &PyFrame::format, "FFmpeg's pixel format name.")
      .def_readonly("scan", &PyFrame::scan)
      .def_readonly("planes", &PyFrame::planes);

  py::class_<Frames>(m, "Frames", "An iterator over a clip's decoded frames.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &Frames::next)
      .def("__len__", &Frames::size)
      .def_property_readonly("width", [](const Frames& f) { return f.clip().width; })
      .def_property_readonly("height", [](const Frames& f) { return f.clip().height; })
      .def_property_readonly("fourcc", [](const Frames& f) { return f.clip().fourcc_string(); })
      .def_property_readonly("frame_rate",
                             [](const Frames& f) -> std::optional<double> {
                               if (!f.clip().fps_num || !f.clip().fps_den) return std::nullopt;
                               return double(f.clip().fps_num) / f.clip().fps_den;
                             })
      .def_property_readonly("damage", &Frames::damage,
                             "Messages for the damaged slices met so far (concealed grey).");

  m.def(
      "decode",
      [](py::handle src, const std::string& device, int bit_depth, int batch, bool strict) {
        prores::DecodeOptions o;
        const Placement where = parse_device(device);
        o.backend = where.cuda ? Backend::cuda : Backend::cpu_parallel;
        o.device = where.index;
        o.bit_depth = bit_depth;
        o.batch = batch;
        o.stop_on_damage = strict;
        if (py::isinstance<py::str>(src) || py::hasattr(src, "__fspath__")) {
          auto path = py::module_::import("os").attr("fspath")(src).cast<std::string>();
          py::gil_scoped_release nogil;
          return Frames(prores::open_file(path), o);
        }
        InputBytes in = input_bytes(src, false);
        std::vector<std::uint8_t> bytes(in.bytes.begin(), in.bytes.end());
        py::gil_scoped_release nogil;
        return Frames(prores::read_raw(std::move(bytes)), o);
      },
      py::arg("src"), py::kw_only(), py::arg("device") = "auto", py::arg("bit_depth") = 0,
      py::arg("batch") = 16, py::arg("strict") = false, R"doc(
Decodes a ProRes clip: a MOV/QuickTime path, or raw 'icpf' frames (a path, bytes or a host
array). Returns an iterator of Frames, decoded `batch` frames at a time (memory stays that of
one batch). device: "auto", "cpu" (all cores) or "cuda[:N]"; planes come back in host memory.
bit_depth: 0 as FFmpeg (from the FourCC), or 10 / 12. strict: raise at the first damaged slice.
)doc");
}

}  // namespace sigpu::python
