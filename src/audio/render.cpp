// The offline renderer: a sound file through the graph, period by period, with libsndfile.
#include <sigpu/audio.hpp>

#include "core/timer.hpp"

#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#endif

namespace sigpu::audio {

#ifdef SIGPU_HAVE_SNDFILE
namespace {

struct SndFile {
  SNDFILE* f = nullptr;
  ~SndFile() {
    if (f) sf_close(f);
  }
};

int output_format(const std::string& path) {
  auto dot = path.rfind('.');
  std::string ext = dot == std::string::npos ? "" : path.substr(dot + 1);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (ext == "wav") return SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  if (ext == "flac") return SF_FORMAT_FLAC | SF_FORMAT_PCM_24;
  throw Error("render: '" + path + "': the output must be .wav or .flac");
}

}  // namespace

RenderReport render(const Graph& graph, const std::string& in_path, const std::string& out_path,
                    const RenderOptions& options) {
  SF_INFO in_info{};
  SndFile in;
  in.f = sf_open(in_path.c_str(), SFM_READ, &in_info);
  if (!in.f) throw InputError("render: cannot read '" + in_path + "': " + sf_strerror(nullptr));
  if (in_info.channels != graph.inputs()) {
    throw UsageError("render: '" + in_path + "' has " + std::to_string(in_info.channels) +
                     " channels but the graph has " + std::to_string(graph.inputs()) + " inputs");
  }
  Engine engine(graph, {.backend = options.backend,
                        .period = options.period,
                        .sample_rate = double(in_info.samplerate)});
  engine.setup();

  SF_INFO out_info{};
  out_info.samplerate = in_info.samplerate;
  out_info.channels = graph.outputs();
  out_info.format = output_format(out_path);
  if (!sf_format_check(&out_info)) {
    throw Error("render: '" + out_path + "': libsndfile cannot write " +
                std::to_string(out_info.channels) + " channels at " +
                std::to_string(out_info.samplerate) + " Hz in this format");
  }
  SndFile out;
  out.f = sf_open(out_path.c_str(), SFM_WRITE, &out_info);
  if (!out.f) throw OutputError("render: cannot write '" + out_path + "': " + sf_strerror(nullptr));
  // FLAC is integer: clip rather than wrap.
  sf_command(out.f, SFC_SET_CLIPPING, nullptr, SF_TRUE);

  const int P = options.period, ci = graph.inputs(), co = graph.outputs();
  const std::uint64_t frames = in_info.frames > 0 ? std::uint64_t(in_info.frames) : 0;
  const std::uint64_t total =
      frames +
      std::uint64_t(std::llround(std::max(0.0, options.tail_seconds) * in_info.samplerate));
  std::vector<float> interleaved(std::size_t(P) * std::max(ci, co));
  std::vector<float> planar_in(std::size_t(P) * ci), planar_out(std::size_t(P) * co);
  std::vector<const float*> ins(ci);
  std::vector<float*> outs(co);
  for (int c = 0; c < ci; ++c) ins[c] = planar_in.data() + std::size_t(c) * P;
  for (int c = 0; c < co; ++c) outs[c] = planar_out.data() + std::size_t(c) * P;
  Stopwatch clock;
  std::uint64_t done = 0;
  while (done < total) {
    const auto n = static_cast<sf_count_t>(std::min<std::uint64_t>(P, total - done));
    sf_count_t got = 0;
    if (done < frames) {
      const auto want = static_cast<sf_count_t>(std::min<std::uint64_t>(n, frames - done));
      got = sf_readf_float(in.f, interleaved.data(), want);
      if (got != want) {
        throw Error("render: '" + in_path + "' ended early at frame " +
                    std::to_string(done + std::uint64_t(std::max<sf_count_t>(got, 0))));
      }
    }
    std::fill(planar_in.begin(), planar_in.end(), 0.0f);
    for (sf_count_t i = 0; i < got; ++i) {
      for (int c = 0; c < ci; ++c) planar_in[std::size_t(c) * P + i] = interleaved[i * ci + c];
    }
    engine.process(ins.data(), outs.data());
    for (sf_count_t i = 0; i < n; ++i) {
      for (int c = 0; c < co; ++c) interleaved[i * co + c] = planar_out[std::size_t(c) * P + i];
    }
    if (sf_writef_float(out.f, interleaved.data(), n) != n) {
      throw OutputError("render: writing '" + out_path + "' failed: " + sf_strerror(out.f));
    }
    done += std::uint64_t(n);
    if (options.progress) options.progress(done, total);
  }
  RenderReport r;
  r.frames = total;
  r.sample_rate = in_info.samplerate;
  r.seconds = clock.seconds();
  return r;
}

#else

RenderReport render(const Graph&, const std::string&, const std::string&, const RenderOptions&) {
  throw Error("render: sigpu was built without libsndfile");
}

#endif

}  // namespace sigpu::audio
