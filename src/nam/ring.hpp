// A history of frames of `width` floats, indexed by an ever-growing sample position; sized to
// a power of two so that a period can be written while the taps it reads are still there.
#pragma once

#include <cstddef>
#include <vector>

namespace sigpu::nam {

/// The smallest power of two >= n.
inline long ring_size(long n) {
  long r = 1;
  while (r < n) r <<= 1;
  return r;
}

class Ring {
 public:
  Ring() = default;
  /// Keeps `history` past frames while a period of up to `period` frames is written.
  Ring(int width, long history, long period)
      : width_(width),
        mask_(ring_size(history + period) - 1),
        data_(static_cast<std::size_t>(mask_ + 1) * width, 0.0f) {}

  float* row(long long pos) { return data_.data() + (pos & mask_) * width_; }
  const float* row(long long pos) const { return data_.data() + (pos & mask_) * width_; }
  void clear() { data_.assign(data_.size(), 0.0f); }
  float* data() { return data_.data(); }
  const float* data() const { return data_.data(); }
  long mask() const { return mask_; }

 private:
  int width_ = 0;
  long mask_ = 0;
  std::vector<float> data_;
};

}  // namespace sigpu::nam
