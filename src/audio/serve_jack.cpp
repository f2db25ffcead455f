// serve's JACK source: the JACK driver of `sigpu audio run`, running the LiveEngine on its
// processing thread (ports in_N/out_N, one period of latency).
#include "audio/jack_driver.hpp"
#include "audio/serve_source.hpp"

namespace sigpu::audio {
namespace {

class JackSource final : public ServeSource {
 public:
  explicit JackSource(const ServeOptions& o)
      : driver_({.backend = o.backend,
                 .client_name = "sigpu",
                 .server = o.jack_server,
                 .rt_priority = o.rt_priority}) {}
  int period() const override { return driver_.period(); }
  double sample_rate() const override { return driver_.sample_rate(); }
  void run(LiveEngine& live, const std::atomic<bool>& stop) override {
    driver_.run({live.inputs(), live.outputs(),
                 [&](const float* const* in, float* const* out) { live.process(in, out); },
                 [&] { live.xrun(); }},
                stop);
  }

 private:
  JackDriver driver_;
};

}  // namespace

std::unique_ptr<ServeSource> make_jack_source(const ServeOptions& o) {
  return std::make_unique<JackSource>(o);
}

}  // namespace sigpu::audio
