// The temporary files of unfinished Outputs, for the interrupt handler to remove. A fixed table
// of atomics: the handler may run at any moment and can neither lock nor allocate.
#pragma once

namespace sigpu::io::temp_registry {

/// Remembers `path` (which must stay valid until remove()); beyond the table's size a file is
/// simply not cleaned up on interrupt.
void add(const char* path);
void remove(const char* path);

}  // namespace sigpu::io::temp_registry
