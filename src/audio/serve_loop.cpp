// serve's loop source: the file in memory, one period per period of wall-clock time (an absolute
// deadline, so the pace does not drift); a period that ends past the next deadline counts as an
// xrun and the clock restarts from now.
#include "audio/serve_source.hpp"

#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>

#include <chrono>
#include <thread>
#include <vector>
#endif

namespace sigpu::audio {

#ifdef SIGPU_HAVE_SNDFILE
namespace {

/// Ten minutes at 48 kHz: a loop is a riff or a test signal, not an album.
constexpr sf_count_t kMaxLoopFrames = 48000 * 600;

class LoopSource final : public ServeSource {
 public:
  LoopSource(const ServeOptions& o, int inputs) : o_(o) {
    SF_INFO info{};
    SNDFILE* f = sf_open(o.loop_path.c_str(), SFM_READ, &info);
    if (!f) throw InputError("serve: cannot read '" + o.loop_path + "': " + sf_strerror(nullptr));
    if (info.channels != inputs) {
      sf_close(f);
      throw UsageError("serve: '" + o.loop_path + "' has " + std::to_string(info.channels) +
                       " channels but the graph has " + std::to_string(inputs) + " inputs");
    }
    rate_ = info.samplerate;
    channels_ = info.channels;
    // Read in chunks: the header's frame count is only a claim.
    std::vector<float> chunk(std::size_t(4096) * channels_);
    sf_count_t got = 0;
    while ((got = sf_readf_float(f, chunk.data(), 4096)) > 0) {
      data_.insert(data_.end(), chunk.begin(), chunk.begin() + got * channels_);
      if (static_cast<sf_count_t>(data_.size() / channels_) > kMaxLoopFrames) {
        sf_close(f);
        throw Error("serve: '" + o.loop_path + "' is longer than 10 minutes at 48 kHz");
      }
    }
    sf_close(f);
    if (data_.empty()) throw Error("serve: '" + o.loop_path + "' holds no samples");
    if (o.period < 1 || o.period > 65536) {
      throw Error("serve: period " + std::to_string(o.period) + " is out of range [1, 65536]");
    }
  }

  int period() const override { return o_.period; }
  double sample_rate() const override { return rate_; }

  void run(LiveEngine& live, const std::atomic<bool>& stop) override {
    const int P = o_.period, ci = live.inputs(), co = live.outputs();
    SNDFILE* rec = nullptr;
    if (!o_.record_path.empty()) {
      SF_INFO out{};
      out.samplerate = static_cast<int>(rate_);
      out.channels = co;
      out.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
      rec = sf_open(o_.record_path.c_str(), SFM_WRITE, &out);
      if (!rec)
        throw OutputError("serve: cannot write '" + o_.record_path + "': " + sf_strerror(nullptr));
    }
    std::vector<std::vector<float>> in(ci, std::vector<float>(P)), out(co, std::vector<float>(P));
    std::vector<const float*> ip;
    std::vector<float*> op;
    for (auto& b : in) ip.push_back(b.data());
    for (auto& b : out) op.push_back(b.data());
    std::vector<float> interleaved(std::size_t(P) * co);
    const std::size_t frames = data_.size() / channels_;
    std::size_t pos = 0;
    const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(P / rate_));
    auto deadline = std::chrono::steady_clock::now();
    while (!stop.load(std::memory_order_relaxed)) {
      for (int i = 0; i < P; ++i, pos = pos + 1 == frames ? 0 : pos + 1) {
        for (int c = 0; c < ci; ++c) in[c][i] = data_[pos * channels_ + c];
      }
      live.process(ip.data(), op.data());
      if (rec) {
        for (int i = 0; i < P; ++i) {
          for (int c = 0; c < co; ++c) interleaved[std::size_t(i) * co + c] = out[c][i];
        }
        sf_writef_float(rec, interleaved.data(), P);
      }
      deadline += step;
      const auto now = std::chrono::steady_clock::now();
      if (now > deadline + step) {
        live.xrun();
        deadline = now;
      } else {
        std::this_thread::sleep_until(deadline);
      }
    }
    if (rec) sf_close(rec);
  }

 private:
  const ServeOptions& o_;
  double rate_ = 0;
  int channels_ = 0;
  std::vector<float> data_;  ///< interleaved
};

}  // namespace

std::unique_ptr<ServeSource> make_loop_source(const ServeOptions& o, int inputs) {
  return std::make_unique<LoopSource>(o, inputs);
}

#else

std::unique_ptr<ServeSource> make_loop_source(const ServeOptions&, int) {
  throw Error("serve: a loop needs libsndfile; sigpu was built without it");
}

#endif

}  // namespace sigpu::audio
