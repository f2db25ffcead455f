#include "audio/jack_driver.hpp"
#include "audio/realtime.hpp"

#ifdef SIGPU_HAVE_JACK
#include <jack/jack.h>
#include <semaphore.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
#endif

namespace sigpu::audio {

#ifdef SIGPU_HAVE_JACK
namespace {

/// Fixed slots of `slot` floats; push/pop by index, one producer and one consumer.
class PeriodRing {
 public:
  PeriodRing(std::size_t slots, std::size_t slot)
      : slot_(slot), data_(slots * slot), slots_(slots) {}
  float* write_slot() {
    const auto h = head_.load(std::memory_order_relaxed);
    if (h - tail_.load(std::memory_order_acquire) == slots_) return nullptr;  // full
    return data_.data() + (h % slots_) * slot_;
  }
  void commit() { head_.fetch_add(1, std::memory_order_release); }
  const float* read_slot() {
    const auto t = tail_.load(std::memory_order_relaxed);
    if (head_.load(std::memory_order_acquire) == t) return nullptr;  // empty
    return data_.data() + (t % slots_) * slot_;
  }
  void release() { tail_.fetch_add(1, std::memory_order_release); }

 private:
  std::size_t slot_;
  std::vector<float> data_;
  std::size_t slots_;
  alignas(64) std::atomic<std::uint64_t> head_{0};
  alignas(64) std::atomic<std::uint64_t> tail_{0};
};

struct Client {
  jack_client_t* jack = nullptr;
  std::vector<jack_port_t*> in_ports, out_ports;
  int period = 0, inputs = 0, outputs = 0;
  std::unique_ptr<PeriodRing> in_ring, out_ring;
  sem_t ready{};
  std::atomic<std::uint64_t> periods{0}, xruns{0}, late{0}, dropped{0};
  std::atomic<bool> shutdown{false};
  std::function<void()> on_xrun;

  ~Client() {
    if (jack) jack_client_close(jack);
  }
};

// The real-time callback: copies in, copies out, counts; nothing else.
int process(jack_nframes_t n, void* arg) {
  auto& c = *static_cast<Client*>(arg);
  if (static_cast<int>(n) != c.period) return 0;
  c.periods.fetch_add(1, std::memory_order_relaxed);
  if (float* slot = c.in_ring->write_slot()) {
    for (int ch = 0; ch < c.inputs; ++ch) {
      std::memcpy(slot + ch * n, jack_port_get_buffer(c.in_ports[ch], n), n * sizeof(float));
    }
    c.in_ring->commit();
    sem_post(&c.ready);
  } else {
    c.dropped.fetch_add(1, std::memory_order_relaxed);
  }
  const float* out = c.out_ring->read_slot();
  if (!out) c.late.fetch_add(1, std::memory_order_relaxed);
  for (int ch = 0; ch < c.outputs; ++ch) {
    auto* dst = static_cast<float*>(jack_port_get_buffer(c.out_ports[ch], n));
    if (out) {
      std::memcpy(dst, out + ch * n, n * sizeof(float));
    } else {
      std::memset(dst, 0, n * sizeof(float));
    }
  }
  if (out) c.out_ring->release();
  return 0;
}

int xrun(void* arg) {
  auto& c = *static_cast<Client*>(arg);
  c.xruns.fetch_add(1, std::memory_order_relaxed);
  if (c.on_xrun) c.on_xrun();
  return 0;
}

void on_shutdown(void* arg) {
  static_cast<Client*>(arg)->shutdown.store(true);
}

}  // namespace

struct JackDriver::Impl : Client {};

JackDriver::JackDriver(const JackOptions& o) : o_(o), c_(std::make_unique<Impl>()) {
  if (o.extra_periods < 1) throw Error("jack: extra_periods must be at least 1");
  jack_status_t status{};
  const auto flags =
      static_cast<jack_options_t>(JackNoStartServer | (o.server.empty() ? 0 : JackServerName));
  c_->jack = o.server.empty()
                 ? jack_client_open(o.client_name.c_str(), flags, &status)
                 : jack_client_open(o.client_name.c_str(), flags, &status, o.server.c_str());
  if (!c_->jack) {
    throw Error("jack: no server answered" +
                (o.server.empty() ? std::string() : " under the name '" + o.server + "'") +
                " (status 0x" + std::to_string(static_cast<unsigned>(status)) + ")");
  }
  c_->period = static_cast<int>(jack_get_buffer_size(c_->jack));
  rate_ = jack_get_sample_rate(c_->jack);
}

JackDriver::~JackDriver() = default;

int JackDriver::period() const {
  return c_->period;
}

JackReport JackDriver::run(const JackProcess& p, const std::atomic<bool>& stop) {
  Client& c = *c_;
  const JackOptions& o = o_;
  c.inputs = p.inputs;
  c.outputs = p.outputs;
  c.on_xrun = p.on_xrun;
  for (int ch = 0; ch < c.inputs; ++ch) {
    const std::string name = "in_" + std::to_string(ch + 1);
    c.in_ports.push_back(
        jack_port_register(c.jack, name.c_str(), JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0));
    if (!c.in_ports.back()) throw Error("jack: cannot register port " + name);
  }
  for (int ch = 0; ch < c.outputs; ++ch) {
    const std::string name = "out_" + std::to_string(ch + 1);
    c.out_ports.push_back(
        jack_port_register(c.jack, name.c_str(), JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0));
    if (!c.out_ports.back()) throw Error("jack: cannot register port " + name);
  }
  const std::size_t slots = static_cast<std::size_t>(o.extra_periods) + 3;
  c.in_ring = std::make_unique<PeriodRing>(slots, std::size_t(c.inputs) * c.period);
  c.out_ring = std::make_unique<PeriodRing>(slots, std::size_t(c.outputs) * c.period);
  // The latency: silent periods queued before the first processed one.
  for (int k = 0; k < o.extra_periods; ++k) {
    std::memset(c.out_ring->write_slot(), 0, sizeof(float) * c.outputs * c.period);
    c.out_ring->commit();
  }
  sem_init(&c.ready, 0, 0);
  jack_set_process_callback(c.jack, process, &c);
  jack_set_xrun_callback(c.jack, xrun, &c);
  jack_on_shutdown(c.jack, on_shutdown, &c);

  // The processing thread: waits for captured periods, runs the engine into the output ring.
  std::atomic<bool> done{false};
  std::exception_ptr error;
  std::thread worker([&] {
    enter_realtime(o.rt_priority, p.pool_note);
    std::vector<const float*> ins(c.inputs);
    std::vector<float*> outs(c.outputs);
    try {
      while (!done.load()) {
        timespec until{};
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 50'000'000;
        if (until.tv_nsec >= 1'000'000'000) until.tv_sec += 1, until.tv_nsec -= 1'000'000'000;
        if (sem_timedwait(&c.ready, &until) != 0) continue;
        const float* in = c.in_ring->read_slot();
        float* out = c.out_ring->write_slot();
        if (!in) continue;
        if (!out) {  // the callback is not consuming: drop the oldest capture
          c.in_ring->release();
          continue;
        }
        for (int ch = 0; ch < c.inputs; ++ch) ins[ch] = in + std::size_t(ch) * c.period;
        for (int ch = 0; ch < c.outputs; ++ch) outs[ch] = out + std::size_t(ch) * c.period;
        p.process(ins.data(), outs.data());
        c.in_ring->release();
        c.out_ring->commit();
      }
    } catch (...) {
      error = std::current_exception();
    }
  });

  if (jack_activate(c.jack) != 0) {
    done = true;
    worker.join();
    throw Error("jack: cannot activate the client");
  }
  const auto start = std::chrono::steady_clock::now();
  while (!stop.load() && !c.shutdown.load() && !error) {
    if (o.seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            o.seconds) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  jack_deactivate(c.jack);
  done = true;
  worker.join();
  sem_destroy(&c.ready);
  if (error) std::rethrow_exception(error);

  JackReport r;
  r.periods = c.periods.load();
  r.xruns = c.xruns.load();
  r.late = c.late.load();
  r.dropped = c.dropped.load();
  r.period = c.period;
  r.sample_rate = rate_;
  r.latency_frames = c.period * o.extra_periods;
  return r;
}

JackReport run_jack(const Graph& graph, const JackOptions& o, const std::atomic<bool>& stop) {
  JackDriver driver(o);
  Engine engine(graph, {.backend = o.backend,
                        .period = driver.period(),
                        .sample_rate = driver.sample_rate(),
                        .fifo_priority = o.rt_priority});
  engine.setup();
  JackReport r =
      driver.run({engine.inputs(),
                  engine.outputs(),
                  [&](const float* const* in, float* const* out) { engine.process(in, out); },
                  {},
                  engine.realtime_note()},
                 stop);
  r.backend = std::string(to_string(engine.backend()));
  return r;
}

#else

struct JackDriver::Impl {};

JackDriver::JackDriver(const JackOptions& o) : o_(o) {
  throw Error("jack: sigpu was built without JACK");
}
JackDriver::~JackDriver() = default;
int JackDriver::period() const {
  return 0;
}
JackReport JackDriver::run(const JackProcess&, const std::atomic<bool>&) {
  return {};
}

JackReport run_jack(const Graph&, const JackOptions&, const std::atomic<bool>&) {
  throw Error("jack: sigpu was built without JACK");
}

#endif

}  // namespace sigpu::audio
