#include "hevc/scan.hpp"

namespace sigpu::hevc {

ScanTables::ScanTables() {
  for (int log2 = 0; log2 < 4; ++log2) {
    const int n = 1 << log2;
    auto& diag = order[log2][0];
    int i = 0, x = 0, y = 0;
    while (i < n * n) {
      while (y >= 0) {
        if (x < n && y < n)
          diag[i++] = {static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y)};
        --y;
        ++x;
      }
      y = x;
      x = 0;
    }
    for (int k = 0; k < n * n; ++k) {
      order[log2][1][k] = {static_cast<std::uint8_t>(k % n), static_cast<std::uint8_t>(k / n)};
      order[log2][2][k] = {static_cast<std::uint8_t>(k / n), static_cast<std::uint8_t>(k % n)};
    }
  }
}

const ScanTables& scan_tables() {
  static const ScanTables t;
  return t;
}

}  // namespace sigpu::hevc
