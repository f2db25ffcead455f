// sigpu LTE turbo coding (3GPP TS 36.212 section 5.1): CRC24A/B, code block segmentation,
// the rate-1/3 turbo encoder with its QPP interleaver, a BPSK/QPSK AWGN channel keyed by
// (seed, frame, position), an iterative decoder on the CPU and on the GPU with early termination
// on the blocks' CRCs, rate matching with HARQ soft combining (5.1.4.1, CPU and GPU), and whole
// transport blocks: G rate-matched bits out, G soft bits and a HARQ buffer in.
//
//   auto cw = sigpu::turbo::encode(bits);                       // K = bits.size()
//   std::vector<float> llr(sigpu::turbo::llr_count(K));
//   sigpu::turbo::awgn_llrs(cw, {.ebn0_db = 1.0}, /*frame=*/0, llr);
//   auto out = sigpu::turbo::decode(std::vector<int>{K}, llr, {.subdecoders = 64});
//
// Bits are one per byte (0 or 1). LLRs are log(P(bit = 0) / P(bit = 1)): positive means 0.
// A code block's LLRs are its three encoder streams d0 | d1 | d2, each K + 4 long, exactly
// as 36.212 section 5.1.3.2.2 orders them (tail bits included).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::turbo {

// ---- block sizes and interleaver (36.212 Table 5.1.3-3) ----------------------------------

inline constexpr int kMinK = 40, kMaxK = 6144, kNumBlockSizes = 188;

/// The 188 code block sizes, ascending.
std::span<const int> block_sizes();
/// Index of K in block_sizes(), or -1 when K is not one of them.
int block_size_index(int K);
bool valid_block_size(int K);
/// Throws Error naming K when it is not one of the 188 sizes.
void check_block_size(int K);
/// f1, f2 of the QPP interleaver for K (throws Error for an invalid K).
std::pair<int, int> qpp_coefficients(int K);
/// pi(i) = (f1 i + f2 i^2) mod K: the interleaver output bit i is input bit pi(i).
std::vector<std::uint16_t> qpp_interleaver(int K);

// ---- CRC and segmentation (36.212 5.1.1, 5.1.2) -------------------------------------------

/// The 24 parity bits of CRC24A / CRC24B over `bits`, as a number whose MSB is p0.
std::uint32_t crc24a(std::span<const std::uint8_t> bits);
std::uint32_t crc24b(std::span<const std::uint8_t> bits);

/// The code block sizes 36.212 5.1.2 gives a transport block of A bits (CRC24A included: B =
/// A + 24).
struct Segmentation {
  int A = 0;  ///< transport block bits
  int B = 0;  ///< A + 24
  int C = 0;  ///< code blocks
  int C_plus = 0, C_minus = 0;
  int K_plus = 0, K_minus = 0;
  int F = 0;           ///< filler bits at the start of code block 0
  int L = 0;           ///< 24 when C > 1 (each block carries CRC24B), else 0
  std::vector<int> K;  ///< size of each code block
};
/// Throws Error when A < 1.
Segmentation plan_segmentation(int A);

/// Attaches CRC24A, splits into code blocks (filler bits are 0), attaches CRC24B to each block
/// when there are several. Returns the code blocks concatenated (sum of plan.K bits).
std::vector<std::uint8_t> segment(std::span<const std::uint8_t> transport_block,
                                  const Segmentation& plan);

struct Desegmented {
  std::vector<std::uint8_t> bits;  ///< the A transport block bits
  bool crc24a_ok = false;
  std::vector<bool> crc24b_ok;  ///< per code block; all true when C == 1
  bool ok() const;
};
/// The inverse of segment(): removes filler bits, checks and strips CRC24B, then CRC24A.
/// Throws Error when code_blocks does not hold sum(plan.K) bits.
Desegmented desegment(std::span<const std::uint8_t> code_blocks, const Segmentation& plan);

// ---- encoder (36.212 5.1.3.2) -------------------------------------------------------------

inline std::size_t llr_count(int K) {
  return 3 * (static_cast<std::size_t>(K) + 4);
}

/// d0 | d1 | d2, each K + 4 bits (the layout the decoder reads).
struct Codeword {
  int K = 0;
  std::vector<std::uint8_t> d;  ///< 3 (K + 4) bits
  std::span<const std::uint8_t> stream(int i) const {
    return {d.data() + static_cast<std::size_t>(i) * (K + 4), static_cast<std::size_t>(K) + 4};
  }
};
/// Encodes one code block of K = bits.size() bits (K must be one of the 188 sizes).
Codeword encode(std::span<const std::uint8_t> bits);

// ---- rate matching (36.212 5.1.4.1) ------------------------------------------------------
//
//   tb::RateMatchParams p{.K = K, .E = E, .rv = 0};
//   auto e = tb::rate_match(cw.d, p);                       // E bits to send
//   std::vector<float> buf(tb::soft_buffer_entries(p));     // the HARQ soft buffer, zeros
//   tb::de_rate_match(rx_llrs, p, buf);                     // once per transmission, any rv
//   tb::soft_buffer_to_llrs(buf, p, llr);                   // llr_count(K) values for decode()

/// The UE's soft buffer that limits N_cb for downlink code blocks (36.212 5.1.4.1.2).
struct SoftBufferLimit {
  std::int64_t N_soft = 0;  ///< total soft channel bits of the UE category (36.306)
  int K_C = 1;              ///< 1, or the 2 or 5 that 5.1.4.1.2 gives some categories
  int K_MIMO = 1;           ///< 2 for transmission modes 3, 4, 8, 9, 10, else 1
  int M_DL_HARQ = 8;        ///< downlink HARQ processes (min'd with M_limit = 8)
};

/// K_w = 3 K_Pi = 3 * 32 * ceil((K + 4) / 32): the circular buffer length for K.
int circular_buffer_length(int K);
/// N_cb of a downlink (DL-SCH, PCH) code block of K bits in a transport block of C blocks:
/// min(floor(N_IR / C), K_w), N_IR = floor(N_soft / (K_C K_MIMO min(M_DL_HARQ, 8))). Uplink
/// and MCH blocks use K_w. Throws Error for a bad K, C or limit.
int soft_buffer_size(int K, int C, const SoftBufferLimit& limit);
/// E of code block r (0..C-1) of a transport block given G bits on N_L layers (2 for
/// transmit diversity) with Q_m bits per symbol. Throws Error when G is not a multiple of
/// N_L Q_m or r is out of range.
int code_block_E(std::int64_t G, int N_L, int Q_m, int C, int r);

struct RateMatchParams {
  int K = 0;     ///< code block size (one of the 188)
  int F = 0;     ///< filler bits at the start of the block (code block 0): <NULL> in d0, d1
  int E = 0;     ///< bits sent in this transmission
  int rv = 0;    ///< redundancy version, 0..3
  int N_cb = 0;  ///< soft buffer size (soft_buffer_size()); 0: K_w, no limit
};
/// N_cb, or K_w when p.N_cb is 0: the entries of the soft buffer, one per circular buffer
/// position. Throws Error for invalid params.
int soft_buffer_entries(const RateMatchParams& p);

/// Sub-block interleaving, bit collection and selection: the p.E bits of one transmission
/// from the encoder's d0 | d1 | d2 (llr_count(K) bits, Codeword::d), <NULL> bits skipped.
std::vector<std::uint8_t> rate_match(std::span<const std::uint8_t> d, const RateMatchParams& p);

/// Adds the p.E LLRs of one transmission into the soft buffer (soft_buffer_entries(p), all
/// zeros before the first transmission). Every LLR lands on its circular buffer position, so
/// repeated bits and retransmissions of any rv sum up: chase combining and incremental
/// redundancy alike. int16 and int8 sums saturate at +-(2^(bits-1) - 1).
void de_rate_match(std::span<const float> llr, const RateMatchParams& p,
                   std::span<float> soft_buffer);
void de_rate_match(std::span<const std::int16_t> llr, const RateMatchParams& p,
                   std::span<std::int16_t> soft_buffer);
void de_rate_match(std::span<const std::int8_t> llr, const RateMatchParams& p,
                   std::span<std::int8_t> soft_buffer);

/// Undoes bit collection and sub-block interleaving: the decoder's d0 | d1 | d2 LLRs
/// (llr_count(K)) from a soft buffer (p.E and p.rv are not used). Bits never received read 0;
/// the filler bits, known zeros, read filler_llr (a large positive value, or 0 to erase them).
void soft_buffer_to_llrs(std::span<const float> soft_buffer, const RateMatchParams& p,
                         std::span<float> llr, float filler_llr = 0);
void soft_buffer_to_llrs(std::span<const std::int16_t> soft_buffer, const RateMatchParams& p,
                         std::span<std::int16_t> llr, std::int16_t filler_llr = 0);
void soft_buffer_to_llrs(std::span<const std::int8_t> soft_buffer, const RateMatchParams& p,
                         std::span<std::int8_t> llr, std::int8_t filler_llr = 0);

// ---- channel ------------------------------------------------------------------------------

enum class Modulation { bpsk, qpsk };  ///< QPSK is Gray-mapped: bit 2i on I, bit 2i+1 on Q

struct ChannelOptions {
  Modulation modulation = Modulation::bpsk;
  double ebn0_db = 1.0;  ///< per information bit, rate K / (3K + 12)
  std::uint64_t seed = 1;
};
/// Standard deviation of the noise per real dimension, for unit-energy symbols (BPSK
/// amplitude 1, QPSK 1/sqrt(2) per dimension) at o.ebn0_db and rate K / (3K + 12).
double noise_sigma(int K, const ChannelOptions& o);
/// Sends a codeword over AWGN and writes its LLRs (llr_count(K) floats). The noise is a pure
/// function of (seed, frame, bit position): Philox4x32-10 + Box-Muller.
void awgn_llrs(const Codeword& cw, const ChannelOptions& o, std::uint64_t frame,
               std::span<float> llr);

/// Fixed point: round(llr * 2^frac_bits), saturated to +-(2^(bits-1) - 1).
void quantize(std::span<const float> llr, int frac_bits, std::span<std::int16_t> out);
void quantize(std::span<const float> llr, int frac_bits, std::span<std::int8_t> out);

// ---- decoder ------------------------------------------------------------------------------

enum class Algorithm {
  log_map,      ///< max* with the correction term log(1 + e^-|a-b|) (float LLRs)
  max_log_map,  ///< max, extrinsic scaled by `scaling`
};
enum class Sync {
  strict,  ///< every sub-decoder reads its neighbours' boundary metrics and the other
           ///< decoder's extrinsics from the previous half-iteration: deterministic, and the
           ///< CPU and GPU give bit-identical output
  loose,   ///< GPU: all iterations in one launch, no grid-wide barrier; sub-decoders read
           ///< whatever their neighbours have written so far (the CPU runs strict)
};

/// The CRC a code block ends with, for early termination (36.212 5.1.1): CRC24B in the blocks
/// of a segmented transport block, CRC24A where the transport block is one code block.
enum class BlockCrc { crc24b, crc24a };

/// The metrics of int8 LLRs on the CPU (P = 1, max-log-map): exact, or in saturating 8-bit
/// lanes, twice as many blocks per SIMD vector at a small cost in error rate (docs/turbo.md).
enum class Int8Metrics {
  automatic,   ///< saturating on the CPU where it applies (P = 1, max-log-map), else exact
  exact,       ///< never overflow: the scalar and GPU decoders' output, bit for bit
  saturating,  ///< 8-bit saturating arithmetic (CPU only; needs P = 1 and max-log-map)
};

struct DecoderOptions {
  Backend backend = Backend::automatic;
  Algorithm algorithm = Algorithm::max_log_map;
  int iterations = 6;
  /// P: sub-decoders per code block, 1..K (larger values are clamped to K). Sub-decoder i
  /// decodes bits [i K / P, (i + 1) K / P).
  int subdecoders = 1;
  float scaling = 0.75f;  ///< extrinsic scaling for max-log-map (fixed point: in 1/16 steps)
  Sync sync = Sync::strict;
  int device = 0;
  /// Stop decoding a block after the first iteration (from min_iterations on) whose hard
  /// decisions pass its CRC (`crc`): the block's last 24 bits are the CRC of the others, as
  /// segment() builds the blocks of a transport block (CRC24B with C > 1, CRC24A with C = 1:
  /// leading filler zeros leave the CRC as it is). A block whose CRC never passes runs every
  /// iteration. The check reads the hard decisions after each full iteration, as DPDK's bbdev
  /// does. Strict mode only; off for throughput measurements.
  bool early_termination = false;
  int min_iterations = 1;  ///< early termination: iterations run before the first check
  BlockCrc crc = BlockCrc::crc24b;
  /// Also return the a-posteriori LLRs of the information bits (DecodeResult::llr).
  bool output_llrs = false;
  Int8Metrics int8_metrics = Int8Metrics::automatic;  ///< int8 LLRs only
};

struct DecodeResult {
  std::vector<std::uint8_t> bits;  ///< K per block, concatenated
  /// On request (output_llrs): L(u_k) = log P(u_k = 0) / P(u_k = 1) after the last iteration
  /// the block ran, K per block, in the units of the input LLRs (fixed point: its LSBs).
  std::vector<float> llr;
  std::vector<int> iterations;  ///< per block: iterations run (fewer with early termination)
  Backend backend = Backend::cpu;
  double seconds = 0;  ///< decoding time (device time for cuda)
};

/// Decodes code blocks of sizes `K` (mixed sizes allowed) from their LLRs, concatenated,
/// llr_count(K[b]) per block. Fixed-point LLRs use max-log-map (metrics in int32, extrinsics
/// saturated to the LLR type; int8 on the CPU at P = 1 by default in saturating 8-bit metrics,
/// DecoderOptions::int8_metrics). Throws Error for an invalid K, a wrong LLR count, non-finite
/// LLRs, zero blocks or bad options, naming the value.
DecodeResult decode(std::span<const int> K, std::span<const float> llr, const DecoderOptions& o);
DecodeResult decode(std::span<const int> K, std::span<const std::int16_t> llr,
                    const DecoderOptions& o);
DecodeResult decode(std::span<const int> K, std::span<const std::int8_t> llr,
                    const DecoderOptions& o);

/// The LLR types of decode().
enum class LlrType { f32, i16, i8 };

/// The CPU decoder that decode() runs (cpu and cpu-parallel backends) for LLRs of type t with
/// options o: "inter-frame avx512 (64 blocks int8, 8-bit saturating metrics)" or "inter-frame
/// avx2 (8 blocks int16)" where whole blocks decode side by side in SIMD lanes (P = 1,
/// max-log-map, int8 or int16 LLRs, a CPU with AVX2 or AVX-512BW), else "scalar" (with int8
/// saturating metrics: "scalar (8-bit saturating metrics)"). The environment's SIGPU_TURBO_ISA
/// (scalar, avx2, avx512) narrows the choice; one this CPU lacks is an UnsupportedError, another
/// value a UsageError, here and in decode() where it would apply.
std::string cpu_decoder(LlrType t, const DecoderOptions& o);

/// The GPU decoder with its LLRs kept in device memory, for repeated decoding (benchmarks).
/// One CUDA stream per instance. Throws Error in builds without CUDA.
struct TransportBlockParams;

class CudaDecoder {
 public:
  explicit CudaDecoder(int device = 0);
  ~CudaDecoder();
  CudaDecoder(CudaDecoder&&) noexcept;
  CudaDecoder& operator=(CudaDecoder&&) noexcept;

  /// Copies the LLRs (and interleaver tables) to the device; checks them like decode().
  void load(std::span<const int> K, std::span<const float> llr);
  void load(std::span<const int> K, std::span<const std::int16_t> llr);
  void load(std::span<const int> K, std::span<const std::int8_t> llr);
  /// Sends codewords over the AWGN channel on the GPU and keeps their LLRs on the device for
  /// run(): codewords holds each block's d0 | d1 | d2 bits (llr_count(K) per block, one per
  /// byte, 0 or 1), block b goes as frame first_frame + b, and the LLRs are those awgn_llrs()
  /// (and for int16/int8, quantize() with frac_bits: -1 for 6 or 2) give on the CPU.
  void load_channel(std::span<const int> K, std::span<const std::uint8_t> codewords,
                    const ChannelOptions& o, std::uint64_t first_frame, LlrType type = LlrType::f32,
                    int frac_bits = -1);
  /// One transmission of a transport block (what decode_transport_block() does with the cuda
  /// backend): de-rate-matches its G soft bits (llr) on the GPU into the HARQ soft buffers
  /// `soft` (plan_transport_block(p)'s N_cb per code block, concatenated; updated in place,
  /// saturating for int16 and int8) and makes the code blocks' LLRs from them on the device,
  /// filler bits as filler_llr, for run(). Checks the counts and float LLRs as load() does.
  void load_transport_block(std::span<const float> llr, const TransportBlockParams& p,
                            std::span<float> soft, float filler_llr);
  void load_transport_block(std::span<const std::int16_t> llr, const TransportBlockParams& p,
                            std::span<std::int16_t> soft, std::int16_t filler_llr);
  void load_transport_block(std::span<const std::int8_t> llr, const TransportBlockParams& p,
                            std::span<std::int8_t> soft, std::int8_t filler_llr);
  /// Decodes what load() placed on the device; returns device seconds (CUDA events).
  /// log-map needs float LLRs.
  double run(const DecoderOptions& o);
  /// Hard decisions of the last run(), K per block.
  std::vector<std::uint8_t> bits() const;
  /// A-posteriori LLRs of the last run() (empty unless it had output_llrs), K per block.
  std::vector<float> llrs() const;
  /// Iterations each block ran in the last run().
  std::vector<int> iterations() const;
  /// The kernel of the last run(): "block" (one thread block per code block), "pair" (the same
  /// for int8 LLRs with two sub-decoders per thread, where K = 8 P), "cluster" or "cooperative"
  /// (small batches, one launch), "half-iterations" (a launch each) or "loose".
  std::string_view kernel() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- transport blocks (36.212 5.1.1 - 5.1.5) ---------------------------------------------
//
//   tb::TransportBlockParams p{.A = 5160, .G = 7200, .Q_m = 2, .rv = 0};
//   auto e = tb::encode_transport_block(bits, p);                // the G bits to modulate
//   tb::HarqBuffer<float> harq;                                   // one per HARQ process
//   auto r = tb::decode_transport_block(llrs, p, harq, {.early_termination = true});
//   // r.ok(): CRC24A and every CRC24B passed; else send p.rv = 2, 3, 1 and decode again

/// One transmission of a transport block: its size, the bits the physical channel carries for
/// it, and the redundancy version.
struct TransportBlockParams {
  int A = 0;                ///< transport block size (TBS), bits
  std::int64_t G = 0;       ///< coded bits of this transmission (a multiple of N_L Q_m)
  int Q_m = 2;              ///< bits per modulation symbol: 2, 4, 6 (QPSK, 16QAM, 64QAM)
  int N_L = 1;              ///< layers the transport block is mapped onto (2: transmit diversity)
  int rv = 0;               ///< redundancy version, 0..3
  SoftBufferLimit limit{};  ///< N_soft = 0: no limit (N_cb = K_w, as uplink)
};

/// Code block r of a transport block as rate matching sees it.
struct CodeBlockPlan {
  int K = 0, F = 0;  ///< size, filler bits (code block 0 only)
  int E = 0;         ///< bits in this transmission
  int N_cb = 0;      ///< soft buffer entries (soft_buffer_entries())
};
/// Segmentation, E and N_cb of every code block. Throws Error, naming the value, for A outside
/// 1..2^20, G above 2^24 or not a multiple of N_L Q_m or leaving a code block without bits, Q_m
/// not 1, 2, 4, 6 or 8, N_L outside 1..4, rv outside 0..3, or a bad soft buffer limit.
std::vector<CodeBlockPlan> plan_transport_block(const TransportBlockParams& p);

/// CRC24A, segmentation (filler bits, CRC24B), turbo coding, rate matching of every code block
/// and code block concatenation: the G bits of one transmission of the A bits `tb`.
std::vector<std::uint8_t> encode_transport_block(std::span<const std::uint8_t> tb,
                                                 const TransportBlockParams& p);

/// The soft buffers of one HARQ process, kept by the caller from a transport block's first
/// transmission to its last: every transmission's LLRs add into it (chase combining and
/// incremental redundancy alike). A default-constructed buffer is empty; the first decode sizes
/// it for its transport block, and a later decode of another (A, N_cb) is refused: clear() it
/// for a new transport block.
template <typename T>
struct HarqBuffer {
  int A = 0;              ///< the transport block it holds (0: empty)
  std::vector<int> N_cb;  ///< per code block
  std::vector<T> soft;    ///< the code blocks' soft buffers, concatenated
  int transmissions = 0;  ///< combined so far
  void clear() { *this = HarqBuffer{}; }
};

struct TransportBlockResult {
  std::vector<std::uint8_t> bits;  ///< the A transport block bits
  bool crc24a_ok = false;
  std::vector<bool> crc24b_ok;  ///< per code block (true where C = 1: there is none)
  std::vector<int> iterations;  ///< per code block
  double seconds = 0;           ///< decoder time (DecodeResult::seconds)
  bool ok() const;
};

/// Adds the G LLRs of one transmission (p.rv) into harq, decodes every code block from the
/// combined soft buffers (filler bits as known zeros) with options o, and checks CRC24B and
/// CRC24A. With o.early_termination a code block stops on its CRC24B (CRC24A when C = 1); the
/// decoder's o.crc is set for the caller. Throws Error for a wrong LLR count, non-finite
/// LLRs, bad params, or a harq buffer of another transport block.
TransportBlockResult decode_transport_block(std::span<const float> llr,
                                            const TransportBlockParams& p, HarqBuffer<float>& harq,
                                            const DecoderOptions& o);
TransportBlockResult decode_transport_block(std::span<const std::int16_t> llr,
                                            const TransportBlockParams& p,
                                            HarqBuffer<std::int16_t>& harq,
                                            const DecoderOptions& o);
TransportBlockResult decode_transport_block(std::span<const std::int8_t> llr,
                                            const TransportBlockParams& p,
                                            HarqBuffer<std::int8_t>& harq, const DecoderOptions& o);

// ---- simulation ---------------------------------------------------------------------------

struct SimOptions {
  int K = 6144;
  Modulation modulation = Modulation::bpsk;
  LlrType llr = LlrType::f32;
  int frac_bits = -1;  ///< fixed point; -1: 6 for int16, 2 for int8
  DecoderOptions decoder;
  std::uint64_t seed = 1;
  /// Frames first_frame, first_frame + 1, ... are simulated: a long point can be split over
  /// several runs (or machines: every backend decodes a frame to the same bits in strict mode).
  std::uint64_t first_frame = 0;
  std::uint64_t max_frames = 1000;
  std::uint64_t target_frame_errors = 0;  ///< stop early once this many frames failed (0: never)
  int batch = 64;                         ///< frames per decode() call
};

struct SimPoint {
  double ebn0_db = 0;
  std::uint64_t frames = 0, frame_errors = 0, bits = 0, bit_errors = 0;
  std::uint64_t iterations = 0;  ///< decoder iterations summed over the frames
  double decode_seconds = 0;     ///< time inside decode()
  double ber() const { return bits ? double(bit_errors) / double(bits) : 0.0; }
  double fer() const { return frames ? double(frame_errors) / double(frames) : 0.0; }
  /// Information bits decoded per second (decode time only).
  double mbps() const { return decode_seconds > 0 ? double(bits) / decode_seconds / 1e6 : 0.0; }
};

/// Monte-Carlo BER/FER at one Eb/N0: random information bits (seeded by seed and frame),
/// encode, channel, quantise, decode, count. Frame f always sees the same bits and noise. With
/// decoder.early_termination the last 24 bits of each frame are the CRC24B of the others.
SimPoint simulate(const SimOptions& o, double ebn0_db);

struct FerCrossing {
  double ebn0_db = 0;  ///< where the FER falls to the target (interpolated); valid when found
  bool found = false;  ///< false: the points run never bracketed the target
  std::vector<SimPoint> points;  ///< every point run, in Eb/N0 order
};
/// The Eb/N0 at which the FER of o's decoder falls to `target`: points `step` dB apart from
/// `from` (first down while the FER there is already below the target, then up until it is
/// below), each run as simulate() runs it (until o.target_frame_errors frame errors or
/// o.max_frames frames), at most max_points points; log10(FER) interpolated linearly in dB
/// between the last point above the target and the first below. A point without frame errors
/// counts as below and enters the interpolation as if it had one (the crossing errs high).
/// Throws Error, naming the value, for a target outside (0, 1), a step that is not positive or
/// max_points below 2.
FerCrossing fer_crossing(const SimOptions& o, double target, double from, double step,
                         int max_points = 16);

// ---- transport block simulation -----------------------------------------------------------

enum class Fading {
  none,      ///< AWGN
  rayleigh,  ///< flat Rayleigh: a CN(0, 1) gain per symbol, known to the receiver
};

struct TransportSimOptions {
  int A = 6200;        ///< transport block size
  std::int64_t G = 0;  ///< coded bits per transmission; 0: the multiple of Q_m nearest
                       ///< (A + 24) / rate
  double rate = 0.5;   ///< code rate when G is 0
  int Q_m = 2;         ///< 2, 4, 6: QPSK, 16QAM, 64QAM (36.211 7.1, Gray)
  Fading fading = Fading::none;
  int max_transmissions = 4;  ///< 1..16; rv 0, 2, 3, 1, 0, ...
  LlrType llr = LlrType::f32;
  int frac_bits = -1;  ///< fixed point; -1: 6 for int16, 2 for int8
  DecoderOptions decoder;
  SoftBufferLimit limit{};  ///< N_soft = 0: no limit
  std::uint64_t seed = 1;
  std::uint64_t blocks = 100;  ///< transport blocks per point
};

struct TransportSimPoint {
  double snr_db = 0;  ///< Es/N0 per symbol
  std::uint64_t blocks = 0;
  /// Per transmission t (0-based): transport blocks sent a t-th time, and those still wrong
  /// after it (a wrong block that passed its CRCs counts as wrong).
  std::vector<std::uint64_t> sent, failed;
  std::uint64_t transmissions = 0;                ///< sum of sent
  std::uint64_t delivered_bits = 0;               ///< A per block decoded right
  std::uint64_t iterations = 0, code_blocks = 0;  ///< decoder iterations over code block decodes
  double decode_seconds = 0;  ///< in the decoder, summed over blocks (and cores)
  double seconds = 0;         ///< the whole point, wall time
  /// Blocks still wrong after t + 1 transmissions, over all blocks.
  double bler(int t) const { return blocks ? double(failed[t]) / double(blocks) : 0.0; }
};

/// Whole transport blocks: random bits, CRC, segmentation, coding, rate matching, modulation,
/// the channel (noise and fading keyed by seed, block and transmission), max-log demapping,
/// HARQ combining and decoding, retransmitting with the next rv until the block decodes or
/// max_transmissions. Throws Error for bad options.
TransportSimPoint simulate_transport(const TransportSimOptions& o, double snr_db);

// ---- benchmark ----------------------------------------------------------------------------

/// A GPU decoder configuration the benchmark times: P sub-decoders per block, `iterations` at
/// most (all of them without early termination).
struct BenchConfig {
  int P = 64;
  int iterations = 6;
};

struct BenchOptions {
  int K = 6144;
  std::vector<int> batches{1, 8, 96, 1536};
  std::vector<LlrType> types{LlrType::f32, LlrType::i16, LlrType::i8};
  std::vector<BenchConfig> configs{{64, 6}, {768, 6}};  ///< GPU rows; the CPU runs P = 1
  int iterations = 6;  ///< the CPU row's, and the FER reference's (the serial decoder)
  Algorithm algorithm = Algorithm::max_log_map;  ///< log_map: float LLRs only (types)
  double ebn0_db = 1.0;                          ///< of the timed frames
  /// Frames end in the CRC24B of their other bits, and every decoder (GPU strict, CPU) stops a
  /// block once it passes (min_iterations 1); rows report the mean iterations run. Loose mode
  /// has no early termination and runs every iteration.
  bool early_termination = false;
  bool cpu = true;  ///< measure the CPU parallel decoder for the ratio
  bool gpu = true;  ///< needs a device
  Int8Metrics int8_metrics = Int8Metrics::automatic;  ///< the CPU's (the GPU's are exact)
  int reps = 10;  ///< GPU repetitions per point (median reported); CPU: max(1, reps / 5)
  /// With the GPU: the Eb/N0 where each (LLR type, config) reaches FER fer_target (K-bit
  /// blocks, BPSK/AWGN, simulated on the GPU) against that of the serial decoder (P = 1,
  /// `iterations`, max-log-MAP 0.75, float LLRs); a row is at full quality when it is at most
  /// fer_margin_db above. fer_crossing() finds each: the reference from 0.6 dB, the others from
  /// just below the reference's crossing, 0.05 dB steps, every decoder on the same frames, each
  /// point until fer_min_errors frame errors or fer_max_frames frames.
  /// The CPU decoder's own check for each type (P = 1, `iterations`, cpu-parallel: the CPU
  /// column), against the same reference: with the GPU and fer_check always; without it, only
  /// with cpu_fer_check, the reference then decoded on the CPU (the same bits).
  bool fer_check = true;
  bool cpu_fer_check = false;
  double fer_target = 1e-2, fer_margin_db = 0.1;
  std::uint64_t fer_max_frames = 40000;
  std::uint64_t fer_min_errors = 100;
};

/// "64,128:8,768:16": P, or P:iterations, comma-separated; iterations default to
/// default_iterations. Throws Error naming a malformed entry.
std::vector<BenchConfig> parse_bench_configs(std::string_view list, int default_iterations);

/// One FER check: the serial reference, or a timed configuration.
struct BenchCheck {
  bool reference = false;
  bool cpu = false;  ///< the CPU decoder's check (the CPU column), else a GPU configuration's
  LlrType type = LlrType::f32;
  BenchConfig config;
  bool early_termination = false;
  FerCrossing crossing;
  double delta_db = 0;        ///< crossing - the reference's; NaN unless both were found
  bool full_quality = false;  ///< both found and delta_db <= fer_margin_db
};

/// One (LLR type, batch, config) point. Times in seconds; throughput = K * blocks / time. A
/// batch of fewer than 96 blocks decodes other frames each repetition (a pool of at least 96),
/// so its times spread over frames.
struct BenchRow {
  LlrType type = LlrType::f32;
  int blocks = 0;
  BenchConfig config;
  double strict_min = 0, strict_median = 0, strict_max = 0;
  double strict_iterations = 0;       ///< mean iterations a block ran (GPU strict)
  std::string_view strict_kernel;     ///< CudaDecoder::kernel() of the strict runs
  double loose_median = 0;            ///< loose mode, every iteration (0: not run)
  double cpu_median = 0;              ///< CPU parallel, P = 1, strict (0: not run)
  double cpu_iterations = 0;          ///< mean iterations a block ran on the CPU
  bool strict_matches_cpu_p = false;  ///< GPU strict bits == CPU parallel bits at the same P
  double ber_strict = 0, ber_loose = 0, ber_cpu = 0;  ///< of the timed frames
  bool fer_checked = false;  ///< the FER check ran (fer_check with the GPU)
  double fer_ebn0_db = 0;    ///< BenchCheck's crossing (NaN: not found)
  double fer_delta_db = 0;   ///< BenchCheck::delta_db
  bool full_quality = false;
  bool cpu_fer_checked = false;  ///< the same for the CPU decoder (BenchCheck::cpu)
  double cpu_fer_delta_db = 0;
  bool cpu_full_quality = false;
};

/// What benchmark() checks before it starts: throws Error, naming the value, for an invalid K,
/// a count below 1 (repetitions, iterations, a batch, a config's P or iterations), a
/// non-finite ebn0_db, FER check settings out of range, log-map with integer LLR types, or gpu
/// without a device.
void check_bench_options(const BenchOptions& o);
/// Runs the benchmark: LLRs in device memory, every block of a batch a distinct frame. With
/// the GPU and fer_check, first the FER checks (the reference, then each LLR type and config,
/// then the CPU decoder of each type; on_check after each), then the timed points (on_row after
/// each). Without the GPU, one CPU row per batch and type, checked with cpu_fer_check. Throws Error
/// as check_bench_options() does.
std::vector<BenchRow> benchmark(const BenchOptions& o,
                                const std::function<void(const BenchRow&)>& on_row = {},
                                const std::function<void(const BenchCheck&)>& on_check = {});

/// The benchmark as text: the FER checks as they finish, then the table (bench_header() and a
/// bench_row() per row); each line, newline included, goes to `print`.
std::vector<BenchRow> benchmark_report(const BenchOptions& o,
                                       const std::function<void(std::string_view)>& print);
/// The table's header lines: the setup, the reference crossing (nullptr: no FER check), the
/// margin, the timed frames' Eb/N0, early termination, and the column names.
std::string bench_header(const BenchOptions& o, const BenchCheck* reference);
/// One table line; a row that fails the FER check reads FAIL and ends in '*'.
std::string bench_row(const BenchOptions& o, const BenchRow& r);
/// One line on a FER check's result.
std::string bench_check_line(const BenchOptions& o, const BenchCheck& c);
std::string_view to_string(LlrType t);

}  // namespace sigpu::turbo
