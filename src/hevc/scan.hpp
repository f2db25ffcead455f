// Scan orders (6.5.3 to 6.5.5): up-right diagonal, horizontal and vertical, for 2x2, 4x4 and
// 8x8 arrays (4x4 inside a sub-block, and sub-blocks inside a transform block).
#pragma once

#include <array>
#include <cstdint>

namespace sigpu::hevc {

struct ScanPos {
  std::uint8_t x, y;
};

/// ScanOrder[log2BlockSize][scanIdx][sPos], log2BlockSize 0..3, scanIdx 0 diagonal,
/// 1 horizontal, 2 vertical.
struct ScanTables {
  std::array<std::array<std::array<ScanPos, 64>, 3>, 4> order{};
  ScanTables();
};

const ScanTables& scan_tables();

}  // namespace sigpu::hevc
