// The drivers' side of make_realtime(): their processing thread asks for SCHED_FIFO and locked
// memory, and what was refused is said once per process on stderr.
#pragma once

#include <string>

namespace sigpu::audio {

/// On the thread that will call Engine::process(), after Engine::setup(): make_realtime(priority)
/// (nothing when priority is 0); its note and `pool_note` (Engine::realtime_note()), when not
/// empty, go to stderr as one line, the first time only.
void enter_realtime(int priority, const std::string& pool_note);

}  // namespace sigpu::audio
