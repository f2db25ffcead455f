#include "io/temp_registry.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include <sigpu/io.hpp>

namespace sigpu::io {
namespace {

constexpr int kSlots = 256;
std::atomic<const char*> g_slots[kSlots];

extern "C" void remove_temps_and_die(int signal) {
  for (auto& slot : g_slots)
    if (const char* p = slot.exchange(nullptr)) ::unlink(p);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

void temp_registry::add(const char* path) {
  for (auto& slot : g_slots) {
    const char* empty = nullptr;
    if (slot.compare_exchange_strong(empty, path)) return;
  }
}

void temp_registry::remove(const char* path) {
  for (auto& slot : g_slots) {
    const char* expected = path;
    if (slot.compare_exchange_strong(expected, nullptr)) return;
  }
}

void install_interrupt_cleanup() {
  for (int s : {SIGINT, SIGTERM, SIGHUP}) std::signal(s, remove_temps_and_die);
}

}  // namespace sigpu::io
