// One picture as a 16-bit RGB(A) PNG through libpng, when the build has it.
#pragma once

#include <sigpu/io.hpp>

namespace sigpu::io::png {

bool available();
/// Limited-range Y'CbCr to R'G'B'(A): BT.601 for matrices 5 and 6, BT.709 otherwise.
void write(Output& out, const PictureView& picture, int matrix);

}  // namespace sigpu::io::png
