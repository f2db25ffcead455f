// Code block sizes and QPP interleaver (36.212 Table 5.1.3-3), CRC24A/B, code block
// segmentation and its inverse (5.1.1, 5.1.2), and the turbo encoder (5.1.3.2).
#include <algorithm>
#include <string>

#include <sigpu/turbo.hpp>

namespace sigpu::turbo {
namespace {

struct QppRow {
  int K, f1, f2;
};

// 36.212 Table 5.1.3-3 (taken from two independent published copies that agree; every row is
// checked to give a permutation in tests/turbo/test_coding.cpp).
constexpr QppRow kQppTable[kNumBlockSizes] = {
    {40, 3, 10},      {48, 7, 12},      {56, 19, 42},     {64, 7, 16},      {72, 7, 18},
    {80, 11, 20},     {88, 5, 22},      {96, 11, 24},     {104, 7, 26},     {112, 41, 84},
    {120, 103, 90},   {128, 15, 32},    {136, 9, 34},     {144, 17, 108},   {152, 9, 38},
    {160, 21, 120},   {168, 101, 84},   {176, 21, 44},    {184, 57, 46},    {192, 23, 48},
    {200, 13, 50},    {208, 27, 52},    {216, 11, 36},    {224, 27, 56},    {232, 85, 58},
    {240, 29, 60},    {248, 33, 62},    {256, 15, 32},    {264, 17, 198},   {272, 33, 68},
    {280, 103, 210},  {288, 19, 36},    {296, 19, 74},    {304, 37, 76},    {312, 19, 78},
    {320, 21, 120},   {328, 21, 82},    {336, 115, 84},   {344, 193, 86},   {352, 21, 44},
    {360, 133, 90},   {368, 81, 46},    {376, 45, 94},    {384, 23, 48},    {392, 243, 98},
    {400, 151, 40},   {408, 155, 102},  {416, 25, 52},    {424, 51, 106},   {432, 47, 72},
    {440, 91, 110},   {448, 29, 168},   {456, 29, 114},   {464, 247, 58},   {472, 29, 118},
    {480, 89, 180},   {488, 91, 122},   {496, 157, 62},   {504, 55, 84},    {512, 31, 64},
    {528, 17, 66},    {544, 35, 68},    {560, 227, 420},  {576, 65, 96},    {592, 19, 74},
    {608, 37, 76},    {624, 41, 234},   {640, 39, 80},    {656, 185, 82},   {672, 43, 252},
    {688, 21, 86},    {704, 155, 44},   {720, 79, 120},   {736, 139, 92},   {752, 23, 94},
    {768, 217, 48},   {784, 25, 98},    {800, 17, 80},    {816, 127, 102},  {832, 25, 52},
    {848, 239, 106},  {864, 17, 48},    {880, 137, 110},  {896, 215, 112},  {912, 29, 114},
    {928, 15, 58},    {944, 147, 118},  {960, 29, 60},    {976, 59, 122},   {992, 65, 124},
    {1008, 55, 84},   {1024, 31, 64},   {1056, 17, 66},   {1088, 171, 204}, {1120, 67, 140},
    {1152, 35, 72},   {1184, 19, 74},   {1216, 39, 76},   {1248, 19, 78},   {1280, 199, 240},
    {1312, 21, 82},   {1344, 211, 252}, {1376, 21, 86},   {1408, 43, 88},   {1440, 149, 60},
    {1472, 45, 92},   {1504, 49, 846},  {1536, 71, 48},   {1568, 13, 28},   {1600, 17, 80},
    {1632, 25, 102},  {1664, 183, 104}, {1696, 55, 954},  {1728, 127, 96},  {1760, 27, 110},
    {1792, 29, 112},  {1824, 29, 114},  {1856, 57, 116},  {1888, 45, 354},  {1920, 31, 120},
    {1952, 59, 610},  {1984, 185, 124}, {2016, 113, 420}, {2048, 31, 64},   {2112, 17, 66},
    {2176, 171, 136}, {2240, 209, 420}, {2304, 253, 216}, {2368, 367, 444}, {2432, 265, 456},
    {2496, 181, 468}, {2560, 39, 80},   {2624, 27, 164},  {2688, 127, 504}, {2752, 143, 172},
    {2816, 43, 88},   {2880, 29, 300},  {2944, 45, 92},   {3008, 157, 188}, {3072, 47, 96},
    {3136, 13, 28},   {3200, 111, 240}, {3264, 443, 204}, {3328, 51, 104},  {3392, 51, 212},
    {3456, 451, 192}, {3520, 257, 220}, {3584, 57, 336},  {3648, 313, 228}, {3712, 271, 232},
    {3776, 179, 236}, {3840, 331, 120}, {3904, 363, 244}, {3968, 375, 248}, {4032, 127, 168},
    {4096, 31, 64},   {4160, 33, 130},  {4224, 43, 264},  {4288, 33, 134},  {4352, 477, 408},
    {4416, 35, 138},  {4480, 233, 280}, {4544, 357, 142}, {4608, 337, 480}, {4672, 37, 146},
    {4736, 71, 444},  {4800, 71, 120},  {4864, 37, 152},  {4928, 39, 462},  {4992, 127, 234},
    {5056, 39, 158},  {5120, 39, 80},   {5184, 31, 96},   {5248, 113, 902}, {5312, 41, 166},
    {5376, 251, 336}, {5440, 43, 170},  {5504, 21, 86},   {5568, 43, 174},  {5632, 45, 176},
    {5696, 45, 178},  {5760, 161, 120}, {5824, 89, 182},  {5888, 323, 184}, {5952, 47, 186},
    {6016, 23, 94},   {6080, 47, 190},  {6144, 263, 480},
};

constexpr std::uint32_t kCrc24A =
    0x864CFB;  // D^24+D^23+D^18+D^17+D^14+D^11+D^10+D^7+D^6+D^5+D^4+D^3+D+1
constexpr std::uint32_t kCrc24B = 0x800063;  // D^24+D^23+D^6+D^5+D+1

std::uint32_t crc24(std::span<const std::uint8_t> bits, std::uint32_t poly) {
  std::uint32_t r = 0;
  for (std::uint8_t b : bits) {
    const std::uint32_t top = ((r >> 23) ^ b) & 1u;
    r = (r << 1) & 0xFFFFFFu;
    if (top) r ^= poly;
  }
  return r;
}

void append_crc(std::vector<std::uint8_t>& v, std::uint32_t crc) {
  for (int i = 23; i >= 0; --i) v.push_back(static_cast<std::uint8_t>((crc >> i) & 1u));
}

}  // namespace

std::span<const int> block_sizes() {
  static const std::vector<int> sizes = [] {
    std::vector<int> s;
    for (const auto& r : kQppTable) s.push_back(r.K);
    return s;
  }();
  return sizes;
}

int block_size_index(int K) {
  // 40..512 step 8, 528..1024 step 16, 1056..2048 step 32, 2112..6144 step 64.
  if (K >= 40 && K <= 512 && K % 8 == 0) return (K - 40) / 8;
  if (K > 512 && K <= 1024 && K % 16 == 0) return 59 + (K - 512) / 16;
  if (K > 1024 && K <= 2048 && K % 32 == 0) return 91 + (K - 1024) / 32;
  if (K > 2048 && K <= 6144 && K % 64 == 0) return 123 + (K - 2048) / 64;
  return -1;
}

bool valid_block_size(int K) {
  return block_size_index(K) >= 0;
}

void check_block_size(int K) {
  if (!valid_block_size(K))
    throw Error("turbo: invalid code block size K = " + std::to_string(K) +
                " (must be one of the 188 sizes of 36.212 Table 5.1.3-3, 40..6144)");
}

std::pair<int, int> qpp_coefficients(int K) {
  check_block_size(K);
  const QppRow& r = kQppTable[block_size_index(K)];
  return {r.f1, r.f2};
}

std::vector<std::uint16_t> qpp_interleaver(int K) {
  const auto [f1, f2] = qpp_coefficients(K);
  std::vector<std::uint16_t> pi(K);
  // pi(i) = (f1 i + f2 i^2) mod K, computed incrementally: pi(i+1) = pi(i) + g(i),
  // g(i+1) = g(i) + 2 f2 (mod K).
  std::int64_t p = 0, g = (f1 + f2) % K;
  for (int i = 0; i < K; ++i) {
    pi[i] = static_cast<std::uint16_t>(p);
    p = (p + g) % K;
    g = (g + 2 * f2) % K;
  }
  return pi;
}

std::uint32_t crc24a(std::span<const std::uint8_t> bits) {
  return crc24(bits, kCrc24A);
}
std::uint32_t crc24b(std::span<const std::uint8_t> bits) {
  return crc24(bits, kCrc24B);
}

Segmentation plan_segmentation(int A) {
  if (A < 1)
    throw Error("turbo: transport block size A = " + std::to_string(A) + " must be at least 1");
  if (A > (1 << 26))
    throw Error("turbo: transport block size A = " + std::to_string(A) + " is too large");
  Segmentation s;
  s.A = A;
  s.B = A + 24;
  constexpr int Z = kMaxK;
  int B_prime;
  if (s.B <= Z) {
    s.L = 0;
    s.C = 1;
    B_prime = s.B;
  } else {
    s.L = 24;
    s.C = (s.B + (Z - s.L) - 1) / (Z - s.L);
    B_prime = s.B + s.C * s.L;
  }
  const auto sizes = block_sizes();
  // K+: the smallest K with C K >= B'.
  int ip = 0;
  while (s.C * sizes[ip] < B_prime) ++ip;
  s.K_plus = sizes[ip];
  if (s.C == 1) {
    s.C_plus = 1;
    s.K_minus = 0;
    s.C_minus = 0;
  } else {
    s.K_minus = sizes[ip - 1];
    const int dK = s.K_plus - s.K_minus;
    s.C_minus = (s.C * s.K_plus - B_prime) / dK;
    s.C_plus = s.C - s.C_minus;
  }
  s.F = s.C_plus * s.K_plus + s.C_minus * s.K_minus - B_prime;
  for (int r = 0; r < s.C; ++r) s.K.push_back(r < s.C_minus ? s.K_minus : s.K_plus);
  return s;
}

std::vector<std::uint8_t> segment(std::span<const std::uint8_t> tb, const Segmentation& plan) {
  if (static_cast<int>(tb.size()) != plan.A)
    throw Error("turbo: transport block has " + std::to_string(tb.size()) +
                " bits, the plan expects A = " + std::to_string(plan.A));
  std::vector<std::uint8_t> b(tb.begin(), tb.end());
  append_crc(b, crc24a(tb));
  std::vector<std::uint8_t> out;
  std::size_t s = 0;
  for (int r = 0; r < plan.C; ++r) {
    std::vector<std::uint8_t> cr;
    const int Kr = plan.K[r];
    if (r == 0) cr.assign(plan.F, 0);  // filler bits (<NULL>, encoded as 0)
    while (static_cast<int>(cr.size()) < Kr - plan.L) cr.push_back(b[s++]);
    if (plan.L) append_crc(cr, crc24b(cr));
    out.insert(out.end(), cr.begin(), cr.end());
  }
  return out;
}

bool Desegmented::ok() const {
  return crc24a_ok && std::all_of(crc24b_ok.begin(), crc24b_ok.end(), [](bool b) { return b; });
}

Desegmented desegment(std::span<const std::uint8_t> cb, const Segmentation& plan) {
  std::size_t total = 0;
  for (int k : plan.K) total += k;
  if (cb.size() != total)
    throw Error("turbo: desegment got " + std::to_string(cb.size()) +
                " code block bits, the plan for A = " + std::to_string(plan.A) + " has " +
                std::to_string(total));
  Desegmented d;
  std::vector<std::uint8_t> b;
  b.reserve(plan.B);
  std::size_t pos = 0;
  for (int r = 0; r < plan.C; ++r) {
    const int Kr = plan.K[r];
    const auto block = cb.subspan(pos, Kr);
    d.crc24b_ok.push_back(plan.L == 0 || crc24b(block) == 0);
    const int first = r == 0 ? plan.F : 0;
    b.insert(b.end(), block.begin() + first, block.begin() + (Kr - plan.L));
    pos += Kr;
  }
  d.crc24a_ok = crc24a(b) == 0;
  b.resize(plan.A);
  d.bits = std::move(b);
  return d;
}

Codeword encode(std::span<const std::uint8_t> bits) {
  const int K = static_cast<int>(bits.size());
  check_block_size(K);
  const auto pi = qpp_interleaver(K);
  Codeword cw;
  cw.K = K;
  cw.d.assign(llr_count(K), 0);
  std::uint8_t* d0 = cw.d.data();
  std::uint8_t* d1 = d0 + (K + 4);
  std::uint8_t* d2 = d1 + (K + 4);
  // State s = r0 << 2 | r1 << 1 | r2 (r0 newest); feedback a = u ^ r1 ^ r2, parity a ^ r0 ^ r2.
  auto step = [](int& s, int u) {
    const int r0 = s >> 2, r1 = (s >> 1) & 1, r2 = s & 1;
    const int a = u ^ r1 ^ r2;
    s = (a << 2) | (r0 << 1) | r1;
    return a ^ r0 ^ r2;
  };
  int s1 = 0, s2 = 0;
  for (int k = 0; k < K; ++k) {
    d0[k] = bits[k] & 1;
    d1[k] = static_cast<std::uint8_t>(step(s1, bits[k] & 1));
    d2[k] = static_cast<std::uint8_t>(step(s2, bits[pi[k]] & 1));
  }
  // Termination: input = feedback, so the register fills with zeros. x, z per encoder.
  std::uint8_t x[3], z[3], xp[3], zp[3];
  for (int j = 0; j < 3; ++j) {
    int u = ((s1 >> 1) ^ s1) & 1;
    x[j] = static_cast<std::uint8_t>(u);
    z[j] = static_cast<std::uint8_t>(step(s1, u));
  }
  for (int j = 0; j < 3; ++j) {
    int u = ((s2 >> 1) ^ s2) & 1;
    xp[j] = static_cast<std::uint8_t>(u);
    zp[j] = static_cast<std::uint8_t>(step(s2, u));
  }
  d0[K] = x[0];
  d0[K + 1] = z[1];
  d0[K + 2] = xp[0];
  d0[K + 3] = zp[1];
  d1[K] = z[0];
  d1[K + 1] = x[2];
  d1[K + 2] = zp[0];
  d1[K + 3] = xp[2];
  d2[K] = x[1];
  d2[K + 1] = z[2];
  d2[K + 2] = xp[1];
  d2[K + 3] = zp[2];
  return cw;
}

}  // namespace sigpu::turbo
