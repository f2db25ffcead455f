// Which container libavformat recognises in a file's first bytes, asked quietly. Its own probe
// (avformat_open_input without a format) logs its guesses, "detected only with low score" and
// the raw demuxers' "No start code is found", to the process's log, where they print before the
// decoder's own message about a file that is no container at all. Include only where
// libavformat is built in.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

extern "C" {
#include <libavformat/avformat.h>
}

namespace sigpu {

/// The input format whose signature `first` (a file's first bytes, a few KB) carries with
/// libavformat's confidence to open it (the file's name not considered), or null.
inline const AVInputFormat* container_by_signature(std::span<const std::uint8_t> first) {
  std::vector<std::uint8_t> padded(first.size() + AVPROBE_PADDING_SIZE, 0);
  std::copy(first.begin(), first.end(), padded.begin());
  AVProbeData pd{};
  pd.filename = "";
  pd.buf = padded.data();
  pd.buf_size = static_cast<int>(first.size());
  int score = 0;
  const AVInputFormat* f = av_probe_input_format3(&pd, 1, &score);
  return f && score >= AVPROBE_SCORE_RETRY ? f : nullptr;
}

}  // namespace sigpu
