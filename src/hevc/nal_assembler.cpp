#include "hevc/nal_assembler.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include <sigpu/core.hpp>

namespace sigpu::hevc {

std::size_t max_nal_bytes_for(std::int64_t max_luma_samples) {
  const std::int64_t samples = std::max<std::int64_t>(max_luma_samples, 0);
  return static_cast<std::size_t>(std::min<std::int64_t>(samples, std::int64_t{1} << 36) * 3) +
         (std::size_t{1} << 20);
}

// Appends bytes that end no start code to the NAL unit in progress. A run of zero bytes at
// the end is only counted until something else follows: it may be trailing_zero_8bits or the
// next start code's, which belong to no NAL unit (and a stream of zeros then takes no memory).
void NalAssembler::take(std::span<const std::uint8_t> b) {
  if (b.empty()) return;
  std::size_t run = 0;
  while (run < b.size() && b[b.size() - 1 - run] == 0) ++run;
  if (!in_nal_) {
    if (offset_ + b.size() > max_nal_bytes_)
      throw InputError("no start code (00 00 01) in the first " + std::to_string(max_nal_bytes_) +
                       " bytes: not an HEVC Annex B byte stream");
  } else if (nal_.size() + zeros_ + b.size() > max_nal_bytes_) {
    throw InputError("NAL unit at byte " + std::to_string(nal_start_) + ": longer than " +
                     std::to_string(max_nal_bytes_) +
                     " bytes without a start code, more than a picture within the decoder's "
                     "size limit can take");
  } else if (run < b.size()) {
    nal_.insert(nal_.end(), zeros_, 0);
    nal_.insert(nal_.end(), b.begin(), b.end() - static_cast<std::ptrdiff_t>(run));
  }
  zeros_ = run == b.size() ? zeros_ + run : run;
  offset_ += b.size();
}

void NalAssembler::end_nal(const OnNal& on_nal) {
  if (!in_nal_) return;
  ++nal_units_;
  on_nal(nal_, nal_start_);
}

void NalAssembler::push(std::span<const std::uint8_t> b, const OnNal& on_nal) {
  std::size_t pos = 0;
  while (pos < b.size()) {
    const void* hit = std::memchr(b.data() + pos, 1, b.size() - pos);
    const std::size_t one =
        hit ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(hit) - b.data()) : b.size();
    take(b.subspan(pos, one - pos));
    if (one == b.size()) break;
    if (zeros_ >= 2) {
      // 00 00 01 ends here: its zero bytes (and any before them) are only counted.
      const std::size_t prefix = offset_ - 2 - (zeros_ >= 3 ? 1 : 0);
      end_nal(on_nal);
      nal_.clear();
      in_nal_ = true;
      nal_start_ = prefix;
      zeros_ = 0;
      ++offset_;
    } else {
      take(b.subspan(one, 1));
    }
    pos = one + 1;
  }
}

void NalAssembler::finish(const OnNal& on_nal) {
  end_nal(on_nal);
  nal_.clear();
  nal_.shrink_to_fit();
  in_nal_ = false;
}

void NalAssembler::reset() {
  nal_.clear();
  nal_.shrink_to_fit();
  in_nal_ = false;
  nal_start_ = zeros_ = offset_ = nal_units_ = 0;
}

}  // namespace sigpu::hevc
