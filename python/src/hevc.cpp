// sigpu.hevc: HEVC streams decoded into frames of planes as the caller iterates.
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

// Host planes are taken from the decoder's frame (it reuses what the sink leaves, an empty one);
// planes on the device are views of the picture, which the frame's owner keeps from reuse.
PyFrame to_python(hevc::Frame& f) {
  PyFrame out{f.width,        f.height,   f.bit_depth_luma,  f.poc,
              f.decode_index, f.filtered, hash_name(f.hash), {}};
  for (int c = 0; c < 3; ++c) {
    const std::int64_t w = f.plane_width[c], h = f.plane_height[c];
    if (w == 0) continue;
    if (f.device.planes[c]) {
      out.planes.push_back(device_rows(std::const_pointer_cast<void>(f.device.owner),
                                       f.device.planes[c], std::size_t(f.device.pitch[c]) * 2,
                                       std::size_t(w) * 2, h, dl_type<std::uint16_t>()));
    } else {
      out.planes.push_back(host_array(std::move(f.planes[c]), {h, w}));
    }
  }
  return out;
}

/// Reads the stream a chunk at a time and decodes it as frames are asked for.
class Frames {
 public:
  Frames(std::optional<hevc::Source> source, InputBytes bytes, hevc::DecodeOptions o)
      : source_(std::move(source)), bytes_(std::move(bytes)), decoder_(o) {}

  PyFrame next() {
    auto on_frame = [this](hevc::Frame& f) { ready_.push_back(to_python(f)); };
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
  m.doc() =
      "HEVC (H.265) decoding, Main and Main 10, reconstructed on the GPU with device=\"cuda\".";

  py::class_<PyFrame>(m, "Frame", R"doc(
One decoded picture in output order, cropped: planes Y, Cb, Cr (Y alone for monochrome) as
uint16 arrays (rows, plane width), whatever the bit depth; in host memory, or on the GPU with
frames_on_device=True.
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
      [](py::handle src, const std::string& device, bool unfiltered, bool check_hash,
         bool frames_on_device) {
        hevc::DecodeOptions o;
        o.backend = device == "cpu-parallel"    ? Backend::cpu_parallel
                    : parse_device(device).cuda ? Backend::cuda
                                                : Backend::cpu;
        o.unfiltered = unfiltered;
        o.check_hash = check_hash;
        o.frames_on_device = frames_on_device;
        if (py::isinstance<py::str>(src) || py::hasattr(src, "__fspath__")) {
          auto path = py::module_::import("os").attr("fspath")(src).cast<std::string>();
          py::gil_scoped_release nogil;
          return std::make_unique<Frames>(hevc::Source::open(path), InputBytes{}, o);
        }
        return std::make_unique<Frames>(std::nullopt, input_bytes(src, false), o);
      },
      py::arg("src"), py::kw_only(), py::arg("device") = "cpu", py::arg("unfiltered") = false,
      py::arg("check_hash") = true, py::arg("frames_on_device") = false, R"doc(
Decodes an HEVC stream: a path (.hevc Annex B, .mp4, .mkv, .ts) or Annex B bytes. Returns an
iterator of Frames in output order, decoding as it goes. device: "cpu" (serial),
"cpu-parallel", "cuda" (parsing on CPU threads, the rest on the GPU). Planes come back in host
memory, or with frames_on_device=True (device="cuda" only) as GPU arrays that share the decoded
picture (DLPack, __cuda_array_interface__): no copy to the host, and the picture is not reused
while an array holds it. check_hash=False skips the picture hash check (with frames on the GPU,
a picture with a hash is otherwise copied down for the check).
)doc");
}

}  // namespace sigpu::python
