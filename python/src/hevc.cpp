// sigpu.hevc: HEVC intra streams decoded into frames of planes as the caller iterates.
#include <sigpu/hevc.hpp>

#include <deque>
#include <optional>

#include "array.hpp"
#include "modules.hpp"

namespace sigpu::python {

namespace hevc = sigpu::hevc;

namespace {

struct PyFrame {
  int width = 0, height = 0, bit_depth = 8, poc = 0;
  std::size_t decode_index = 0;
  bool filtered = false;
  std::string hash;
  std::vector<Array> planes;
};

std::string hash_name(hevc::HashStatus h) {
  switch (h) {
    case hevc::HashStatus::matched:
      return "matched";
    case hevc::HashStatus::mismatched:
      return "mismatched";
    case hevc::HashStatus::unchecked:
      return "unchecked";
    default:
      return "absent";
  }
}

// The decoder hands frames by const reference: their planes are copied once, into arrays.
PyFrame to_python(const hevc::Frame& f) {
  PyFrame out{f.width,        f.height,   f.bit_depth_luma,  f.poc,
              f.decode_index, f.filtered, hash_name(f.hash), {}};
  for (int c = 0; c < 3; ++c) {
    if (f.planes[c].empty()) continue;
    out.planes.push_back(
        host_array(std::vector<std::uint16_t>(f.planes[c]),
                   {std::int64_t(f.plane_height[c]), std::int64_t(f.plane_width[c])}));
  }
  return out;
}

/// Reads the stream a chunk at a time and decodes it as frames are asked for.
class Frames {
 public:
  Frames(std::optional<hevc::Source> source, InputBytes bytes, hevc::DecodeOptions o)
      : source_(std::move(source)), bytes_(std::move(bytes)), decoder_(o) {}

  PyFrame next() {
    auto on_frame = [this](const hevc::Frame& f) { ready_.push_back(to_python(f)); };
    while (ready_.empty() && !done_) {
      py::gil_scoped_release nogil;
      hevc::Chunk chunk{std::span<const std::uint8_t>{}};
      if (source_)
        chunk = source_->read();
      else if (!fed_)
        chunk = bytes_.bytes;
      fed_ = true;
      if (chunk) {
        decoder_.push(chunk, on_frame);
      } else {
        done_ = true;
        decoder_.finish(on_frame);
      }
    }
    if (ready_.empty()) throw py::stop_iteration();
    PyFrame f = std::move(ready_.front());
    ready_.pop_front();
    return f;
  }

  std::vector<std::string> problems() const {
    std::vector<std::string> out;
    if (source_)
      for (const auto& p : source_->problems()) out.push_back(p.message);
    for (const auto& p : decoder_.problems()) out.push_back(p.message);
    return out;
  }
  std::string format() const { return source_ ? source_->format() : "Annex B"; }

 private:
  std::optional<hevc::Source> source_;
  InputBytes bytes_;
  hevc::Decoder decoder_;
  bool fed_ = false, done_ = false;
  std::deque<PyFrame> ready_;
};

}  // namespace

void init_hevc(py::module_& m) {
  m.doc() = "HEVC (H.265) intra decoding, Main and Main 10, with the in-loop filters on the GPU.";

  py::class_<PyFrame>(m, "Frame", R"doc(
One decoded picture in output order, cropped: planes Y, Cb, Cr (Y alone for monochrome) as
uint16 arrays (rows, plane width), whatever the bit depth.
)doc")
      .def_readonly("width", &PyFrame::width)
      .def_readonly("height", &PyFrame::height)
      .def_readonly("bit_depth", &PyFrame::bit_depth)
      .def_readonly("poc", &PyFrame::poc, "Picture order count.")
      .def_readonly("decode_index", &PyFrame::decode_index)
      .def_readonly("filtered", &PyFrame::filtered)
      .def_readonly("hash", &PyFrame::hash,
                    "The picture hash SEI check: matched, mismatched, unchecked or absent.")
      .def_readonly("planes", &PyFrame::planes);

  py::class_<Frames>(m, "Frames", "An iterator over a stream's decoded pictures.")
      .def("__iter__", [](py::object self) { return self; })
      .def("__next__", &Frames::next)
      .def_property_readonly("problems", &Frames::problems,
                             "Messages for the NAL units that could not be decoded so far.")
      .def_property_readonly("format", &Frames::format, "The container read.");

  m.def(
      "decode",
      [](py::handle src, const std::string& device, bool unfiltered, bool check_hash) {
        hevc::DecodeOptions o;
        o.backend = device == "cpu-parallel"    ? Backend::cpu_parallel
                    : parse_device(device).cuda ? Backend::cuda
                                                : Backend::cpu;
        o.unfiltered = unfiltered;
        o.check_hash = check_hash;
        if (py::isinstance<py::str>(src) || py::hasattr(src, "__fspath__")) {
          auto path = py::module_::import("os").attr("fspath")(src).cast<std::string>();
          py::gil_scoped_release nogil;
          return std::make_unique<Frames>(hevc::Source::open(path), InputBytes{}, o);
        }
        return std::make_unique<Frames>(std::nullopt, input_bytes(src, false), o);
      },
      py::arg("src"), py::kw_only(), py::arg("device") = "cpu", py::arg("unfiltered") = false,
      py::arg("check_hash") = true, R"doc(
Decodes an HEVC stream: a path (.hevc Annex B, .mp4, .mkv, .ts) or Annex B bytes. Returns an
iterator of Frames in output order, decoding as it goes. device: where the in-loop filters run
("cpu", "cpu-parallel", "cuda[:N]"; parsing is on the CPU); planes come back in host memory.
)doc");
}

}  // namespace sigpu::python
