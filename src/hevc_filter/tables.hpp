// The deblocking tables of H.265 (Table 8-11: beta' and tc' by Q; Table 8-10: QpC by qPi for
// 4:2:0), as functions usable on the host and the device.
#pragma once

#include "core/hd.hpp"

namespace sigpu::hevc_filter {

/// beta' for Q = 0..51 (Table 8-11): 0 up to 15, then Q - 10 up to 28, then 2Q - 38.
SIGPU_HD inline int beta_prime(int q) {
  return q < 16 ? 0 : (q < 29 ? q - 10 : 2 * q - 38);
}

/// tc' for Q = 0..53 (Table 8-11). A string literal is the one constant array that host and
/// device code can both index at run time without a per-side copy.
SIGPU_HD inline int tc_prime(int q) {
  return static_cast<unsigned char>(
      "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0"         // Q 0..17
      "\1\1\1\1\1\1\1\1\1\2\2\2\2\3\3\3\3\4\4\4"     // Q 18..37
      "\5\5\6\6\7\10\11\12\13\15\16\20\22\24\26\30"  // Q 38..53
          [q]);
}

/// QpC as a function of qPi for ChromaArrayType 1 (Table 8-10).
SIGPU_HD inline int chroma_qp_420(int qpi) {
  if (qpi < 30) return qpi;
  if (qpi > 43) return qpi - 6;
  return static_cast<unsigned char>("\35\36\37\40\41\41\42\42\43\43\44\44\45\45"[qpi - 30]);
}

SIGPU_HD inline int clip3(int lo, int hi, int v) {
  return v < lo ? lo : (v > hi ? hi : v);
}

}  // namespace sigpu::hevc_filter
