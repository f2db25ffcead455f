// The JACK client behind `sigpu audio run`: JACK's real-time callback and the processing
// thread (which may drive the GPU) exchange periods through two lock-free single-producer
// single-consumer rings, so the callback never waits, allocates, locks or logs.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include <sigpu/audio.hpp>

namespace sigpu::audio {

struct JackOptions {
  Backend backend = Backend::automatic;
  std::string client_name = "sigpu";
  std::string server;  ///< empty: the default server
  double seconds = 0;  ///< 0: until `stop` is set
  /// Latency in periods (>= 1): the output of a callback is the input of this many callbacks
  /// before, so the processing thread has this many periods minus the copies for each.
  int extra_periods = 1;
};

struct JackReport {
  std::uint64_t periods = 0;  ///< JACK callbacks
  std::uint64_t xruns = 0;    ///< reported by the server
  std::uint64_t late = 0;     ///< callbacks that found no processed period (played silence)
  std::uint64_t dropped = 0;  ///< input periods lost because the processing thread fell behind
  int period = 0;
  double sample_rate = 0;
  int latency_frames = 0;
  std::string backend;
};

/// Runs the graph as a JACK client with ports in_1.. and out_1.. at the server's period and
/// sample rate until `seconds` pass, `stop` becomes true, or the server shuts down. Throws
/// Error when no server answers or the graph does not fit (e.g. a frequency above Nyquist).
JackReport run_jack(const Graph& graph, const JackOptions& options, const std::atomic<bool>& stop);

}  // namespace sigpu::audio
