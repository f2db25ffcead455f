// Picture samples, held as one std::uint16_t each, as the bytes raw YUV, Y4M and NumPy files hold
// them: one byte per sample up to 8 bits, else two, little-endian.
#pragma once

#include <cstddef>
#include <cstdint>

namespace sigpu::io {

/// out[i] = the low byte of in[i], for i < n.
void narrow_samples(const std::uint16_t* in, std::size_t n, std::uint8_t* out);

/// out[2i], out[2i + 1] = the low and high bytes of in[i], for i < n.
void samples_le16(const std::uint16_t* in, std::size_t n, std::uint8_t* out);

}  // namespace sigpu::io
