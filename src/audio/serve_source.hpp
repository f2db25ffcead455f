// Where `sigpu audio serve` gets its periods: a sound file played in a loop in real time (for
// use and tests without an audio interface), or JACK.
#pragma once

#include <atomic>
#include <memory>

#include <sigpu/audio.hpp>

#include "audio/live.hpp"

namespace sigpu::audio {

class ServeSource {
 public:
  virtual ~ServeSource() = default;
  virtual int period() const = 0;
  virtual double sample_rate() const = 0;
  /// Runs `live` one period at a time until `stop`.
  virtual void run(LiveEngine& live, const std::atomic<bool>& stop) = 0;
};

/// Reads the whole file (it must have `inputs` channels); records to o.record_path if set.
std::unique_ptr<ServeSource> make_loop_source(const ServeOptions& o, int inputs);
std::unique_ptr<ServeSource> make_jack_source(const ServeOptions& o);

}  // namespace sigpu::audio
