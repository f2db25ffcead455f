// serve's JACK source: not wired yet; refuses clearly (use --loop).
#include "audio/serve_source.hpp"

namespace sigpu::audio {

std::unique_ptr<ServeSource> make_jack_source(const ServeOptions&) {
  throw UnsupportedError("serve: --jack is not supported yet; use --loop FILE");
}

}  // namespace sigpu::audio
