// The first pictures of a stream parsed into their records and reconstructed slice by slice as
// the decoder does, for tests of the records and of the stages that read them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "hevc/parameter_sets.hpp"
#include "hevc/picture.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc::testing {

struct Parsed {
  std::shared_ptr<Sps> sps;
  std::shared_ptr<Pps> pps;
  std::vector<std::shared_ptr<DecodedPicture>> pics;
  /// Each picture's independent slice segment headers (PuRecords::slice indexes them).
  std::vector<std::vector<SliceHeader>> headers;
  int failed_slices = 0;
};

/// The first `count` pictures of an Annex B stream (one SPS and PPS). Every reference of a
/// later picture is the first picture: right for the second picture of a stream, which has no
/// other to predict from; later pictures get whole records (for tests of the stages that read
/// them) but not the right samples. `cut_last_slice` bytes are dropped from the last slice segment
/// of the last picture. Null when the stream has fewer pictures or no parameter sets.
/// `by_rows`: pictures whose one slice segment allows it are parsed row by row on threads of
/// their own (wpp_rows.hpp), records only.
std::unique_ptr<Parsed> parse_pictures(const std::vector<std::uint8_t>& bytes, std::size_t count,
                                       std::size_t cut_last_slice = 0, bool by_rows = false);

}  // namespace sigpu::hevc::testing
