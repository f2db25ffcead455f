// The JACK client behind `sigpu audio run` and `serve --jack`: the real-time callback and a
// processing thread exchange periods through two lock-free rings (jack_client.cpp); what the
// processing thread runs is the caller's.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include <sigpu/audio.hpp>

namespace sigpu::audio {

struct JackProcess {
  int inputs = 0, outputs = 0;  ///< ports in_1.. and out_1..
  /// The processing thread: one period, in[c] and out[c] of period() floats.
  std::function<void(const float* const*, float* const*)> process;
  std::function<void()> on_xrun;  ///< JACK's notification thread; may be empty
  std::string pool_note;          ///< Engine::realtime_note(), said with the thread's own
};

class JackDriver {
 public:
  /// Opens the client (the period and rate are the server's); throws Error when no server
  /// answers.
  explicit JackDriver(const JackOptions& options);
  ~JackDriver();
  int period() const;
  double sample_rate() const { return rate_; }
  /// Registers the ports and runs until `stop`, options.seconds or the server's shutdown.
  JackReport run(const JackProcess& process, const std::atomic<bool>& stop);

 private:
  struct Impl;
  JackOptions o_;
  double rate_ = 0;
  std::unique_ptr<Impl> c_;
};

}  // namespace sigpu::audio
