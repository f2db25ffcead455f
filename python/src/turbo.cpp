// sigpu.turbo: LTE turbo coding (36.212) from Python, on arrays of code blocks.
#include <sigpu/turbo.hpp>

#include "array.hpp"
#include "modules.hpp"

namespace sigpu::python {

namespace turbo = sigpu::turbo;

namespace {

/// A decode's outputs: hard decisions (and on request a-posteriori LLRs), K per block.
struct TurboResult {
  Array bits;
  std::optional<Array> llrs;
  std::vector<int> iterations;
  std::string backend;
  double seconds = 0;
};

/// Blocks of an array: (n,) is one block, (B, n) B blocks of n.
std::pair<std::int64_t, std::int64_t> blocks_of(const HostView& v, const char* what) {
  if (v.shape.size() == 1) return {1, v.shape[0]};
  if (v.shape.size() == 2) return {v.shape[0], v.shape[1]};
  throw UsageError(std::string(what) + " must be one block (n,) or blocks (B, n)");
}

std::vector<std::int64_t> shaped(const HostView& v, std::int64_t blocks, std::int64_t n) {
  if (v.shape.size() == 1) return {n};
  return {blocks, n};
}

void check_bits(const HostView& v, const char* what) {
  if (v.dtype.code == kDLFloat || v.dtype.bits != 8)
    throw UsageError(std::string(what) + " must be uint8 (or bool) 0/1 values, not " +
                     dtype_name(v.dtype));
}

Array encode(py::handle bits) {
  HostView v = host_view(bits, dl_type<std::uint8_t>());
  check_bits(v, "bits");
  auto [blocks, K] = blocks_of(v, "bits");
  const auto in = v.as<std::uint8_t>();
  std::vector<std::uint8_t> out(blocks * turbo::llr_count(int(K)));
  {
    py::gil_scoped_release nogil;
    for (std::int64_t b = 0; b < blocks; ++b) {
      auto cw = turbo::encode(in.subspan(b * K, K));
      std::copy(cw.d.begin(), cw.d.end(), out.begin() + b * cw.d.size());
    }
  }
  return host_array(std::move(out), shaped(v, blocks, std::int64_t(turbo::llr_count(int(K)))));
}

int block_size(std::int64_t n) {
  if (n % 3 || n / 3 <= 4)
    throw UsageError("a code block holds 3 (K + 4) values; " + std::to_string(n) + " is not");
  const int K = int(n / 3 - 4);
  turbo::check_block_size(K);
  return K;
}

turbo::Modulation modulation(const std::string& m) {
  if (m == "bpsk") return turbo::Modulation::bpsk;
  if (m == "qpsk") return turbo::Modulation::qpsk;
  throw UsageError("modulation must be \"bpsk\" or \"qpsk\", not \"" + m + "\"");
}

Array channel(py::handle codewords, double ebn0_db, const std::string& mod, std::uint64_t seed,
              std::uint64_t first_frame) {
  HostView v = host_view(codewords, dl_type<std::uint8_t>());
  check_bits(v, "codewords");
  auto [blocks, n] = blocks_of(v, "codewords");
  const int K = block_size(n);
  const turbo::ChannelOptions o{.modulation = modulation(mod), .ebn0_db = ebn0_db, .seed = seed};
  std::vector<float> llr(blocks * n);
  {
    py::gil_scoped_release nogil;
    turbo::Codeword cw{K, std::vector<std::uint8_t>(n)};
    for (std::int64_t b = 0; b < blocks; ++b) {
      std::copy_n(v.as<std::uint8_t>().begin() + b * n, n, cw.d.begin());
      turbo::awgn_llrs(cw, o, first_frame + b, std::span(llr).subspan(b * n, n));
    }
  }
  return host_array(std::move(llr), shaped(v, blocks, n));
}

Array quantize(py::handle llrs, int frac_bits, const std::string& dtype) {
  HostView v = host_view(llrs, dl_type<float>());
  if (v.dtype.code != kDLFloat || v.dtype.bits != 32)
    throw UsageError("quantize takes float32 LLRs, not " + dtype_name(v.dtype));
  auto run = [&](auto zero) {
    using T = decltype(zero);
    std::vector<T> out(v.size());
    py::gil_scoped_release nogil;
    turbo::quantize(v.as<float>(), frac_bits, std::span<T>(out));
    return out;
  };
  if (dtype == "int16") return host_array(run(std::int16_t{}), v.shape);
  if (dtype == "int8") return host_array(run(std::int8_t{}), v.shape);
  throw UsageError("dtype must be \"int16\" or \"int8\", not \"" + dtype + "\"");
}

TurboResult decode(py::handle llrs, const std::string& device, int iterations, int subdecoders,
                   const std::string& algorithm, float scaling, const std::string& sync,
                   bool early_termination, bool output_llrs) {
  HostView v = host_view(llrs, dl_type<float>());
  auto [blocks, n] = blocks_of(v, "llrs");
  const int K = block_size(n);
  const Placement where = parse_device(device);
  turbo::DecoderOptions o;
  o.backend = where.cuda ? Backend::cuda : Backend::cpu_parallel;
  o.device = where.index;
  o.iterations = iterations;
  o.subdecoders = subdecoders;
  o.scaling = scaling;
  o.early_termination = early_termination;
  o.output_llrs = output_llrs;
  if (algorithm == "max-log-map")
    o.algorithm = turbo::Algorithm::max_log_map;
  else if (algorithm == "log-map")
    o.algorithm = turbo::Algorithm::log_map;
  else
    throw UsageError("algorithm must be \"max-log-map\" or \"log-map\", not \"" + algorithm + "\"");
  if (sync == "strict")
    o.sync = turbo::Sync::strict;
  else if (sync == "loose")
    o.sync = turbo::Sync::loose;
  else
    throw UsageError("sync must be \"strict\" or \"loose\", not \"" + sync + "\"");
  const std::vector<int> Ks(blocks, K);
  turbo::DecodeResult r;
  {
    py::gil_scoped_release nogil;
    if (v.dtype.code == kDLFloat && v.dtype.bits == 32)
      r = turbo::decode(Ks, v.as<float>(), o);
    else if (v.dtype.code == kDLInt && v.dtype.bits == 16)
      r = turbo::decode(Ks, v.as<std::int16_t>(), o);
    else if (v.dtype.code == kDLInt && v.dtype.bits == 8)
      r = turbo::decode(Ks, v.as<std::int8_t>(), o);
    else
      throw UsageError("LLRs must be float32, int16 or int8, not " + dtype_name(v.dtype));
  }
  TurboResult out;
  out.bits = host_array(std::move(r.bits), shaped(v, blocks, K));
  if (output_llrs) out.llrs = host_array(std::move(r.llr), shaped(v, blocks, K));
  out.iterations = std::move(r.iterations);
  out.backend = std::string(to_string(r.backend));
  out.seconds = r.seconds;
  return out;
}

}  // namespace

void init_turbo(py::module_& m) {
  m.doc() = "LTE turbo coding (3GPP TS 36.212): encoder, AWGN channel, iterative decoder.";

  py::class_<TurboResult>(m, "Decoded", "What turbo.decode gives back.")
      .def_readonly("bits", &TurboResult::bits, "Hard decisions (uint8 0/1), K per block.")
      .def_readonly("llrs", &TurboResult::llrs,
                    "A-posteriori LLRs of the information bits (with output_llrs), else None.")
      .def_readonly("iterations", &TurboResult::iterations, "Iterations each block ran.")
      .def_readonly("backend", &TurboResult::backend)
      .def_readonly("seconds", &TurboResult::seconds, "Decoding time (device time for cuda).");

  m.def(
      "block_sizes",
      [] {
        auto s = turbo::block_sizes();
        return std::vector<int>(s.begin(), s.end());
      },
      "The 188 code block sizes K of 36.212 Table 5.1.3-3, ascending.");

  m.def("encode", &encode, py::arg("bits"), R"doc(
Turbo-encodes code blocks: bits (K,) or (B, K) of 0/1 (K one of block_sizes()) to codewords
(3 (K + 4),) or (B, 3 (K + 4)): the streams d0 | d1 | d2 of each block, tail bits included.
)doc");

  m.def("channel", &channel, py::arg("codewords"), py::kw_only(), py::arg("ebn0_db"),
        py::arg("modulation") = "bpsk", py::arg("seed") = 1, py::arg("first_frame") = 0, R"doc(
Sends codewords over an AWGN channel (BPSK or Gray-mapped QPSK at Eb/N0 per information bit)
and returns their float32 LLRs, log P(0)/P(1). Block b is frame first_frame + b: the noise is a
pure function of (seed, frame, position).
)doc");

  m.def("quantize", &quantize, py::arg("llrs"), py::kw_only(), py::arg("frac_bits"),
        py::arg("dtype") = "int16",
        "Fixed-point LLRs: round(llr * 2**frac_bits), saturated to the type.");

  m.def("decode", &decode, py::arg("llrs"), py::kw_only(), py::arg("device") = "auto",
        py::arg("iterations") = 6, py::arg("subdecoders") = 1, py::arg("algorithm") = "max-log-map",
        py::arg("scaling") = 0.75f, py::arg("sync") = "strict",
        py::arg("early_termination") = false, py::arg("output_llrs") = false, R"doc(
Decodes code blocks from their LLRs: (3 (K + 4),) or (B, 3 (K + 4)) of float32, int16 or int8
(a NumPy array or any DLPack array; GPU arrays are read through host memory). Returns a
Decoded with bits (K,) or (B, K).

device: "auto", "cpu" (all cores) or "cuda[:N]"; subdecoders: sub-decoders per block (P);
algorithm: "max-log-map" or "log-map" (float LLRs only); sync: "strict" (deterministic, CPU and
GPU bit-identical) or "loose" (GPU); early_termination: stop a block once its CRC24B passes.
)doc");
}

}  // namespace sigpu::python
