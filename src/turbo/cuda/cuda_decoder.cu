// The GPU turbo decoder: LLRs and every working array stay in device memory. Strict mode runs
// P > 384 on one thread block cluster per code block for all iterations (StrictClusterKernel)
// where every block's cluster fits on the device at once, else one thread block per code block
// (StrictBlockKernel) where the block's shared memory fits and the batch is not a small one of
// large P (small_batch); in its place, for int8 LLRs whose sub-blocks are each one window, two
// sub-decoders per thread in 16-bit halves (StrictPairKernel). Otherwise (those, or larger P)
// one cooperative launch for batches that fit on the device at once, else one launch per
// half-iteration (the kernel boundary is the barrier). Loose mode is one launch. The
// multi-launch forms are replayed as a CUDA graph. Early termination runs inside each strict
// kernel (EarlyStop); loose mode has none.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "core/cuda/buffer.hpp"
#include "turbo/cuda/block_kernel.cuh"
#include "turbo/cuda/channel_kernel.cuh"
#include "turbo/cuda/cluster_kernel.cuh"
#include "turbo/cuda/pair_kernel.cuh"
#include "turbo/cuda/rate_match.hpp"
#include "turbo/plan.hpp"

namespace sigpu::turbo {

enum class LlrKind { f32, i16, i8 };

struct CudaDecoder::Impl {
  int device = 0;
  sigpu::cuda::Stream stream;
  BatchPlan plan;
  LlrKind kind = LlrKind::f32;
  bool loaded = false;
  sigpu::cuda::DeviceBuffer<std::uint8_t> llr;           // raw bytes of the LLR type
  sigpu::cuda::DeviceBuffer<std::uint8_t> channel_code;  // load_channel's codeword bits
  sigpu::cuda::DeviceBuffer<BlockDesc> blocks;
  sigpu::cuda::DeviceBuffer<std::uint8_t> ext1, ext2;  // raw bytes of the LLR type
  sigpu::cuda::DeviceBuffer<std::uint8_t> bounds;      // alpha then beta, Metric type
  sigpu::cuda::DeviceBuffer<std::uint8_t> scratch;     // Metric type, 8 per bit
  sigpu::cuda::DeviceBuffer<std::uint32_t> sub_block;  // code block of each sub-decoder
  sigpu::cuda::DeviceBuffer<std::uint8_t> bits;
  sigpu::cuda::DeviceBuffer<float> llr_out;
  sigpu::cuda::DeviceBuffer<std::int32_t> done_at;  // early termination: iteration that passed
  sigpu::cuda::DeviceBuffer<std::uint32_t> crc_weights;
  // load_transport_block's: the code blocks' descriptors, the G soft bits, the HARQ soft buffers
  sigpu::cuda::DeviceBuffer<std::uint8_t> rm_blocks, tb_llr, tb_soft;  // raw bytes

  explicit Impl(int dev) : device(dev) {}

  void load_channel(std::span<const int> K, std::span<const std::uint8_t> code,
                    const ChannelOptions& o, std::uint64_t first_frame, LlrType type,
                    int frac_bits) {
    loaded = false;
    plan = make_plan(K, 1, code.size());  // checks K and the count, as load() does
    for (std::size_t i = 0; i < code.size(); ++i)
      if (code[i] > 1)
        throw Error("turbo: codeword bit " + std::to_string(i) + " is " + std::to_string(code[i]) +
                    " (not 0 or 1)");
    if (!std::isfinite(o.ebn0_db)) throw Error("turbo: Eb/N0 must be finite");
    const int bits = type == LlrType::i16 ? 16 : 8;
    if (frac_bits < 0) frac_bits = type == LlrType::i16 ? 6 : 2;
    if (type != LlrType::f32) check_frac_bits(frac_bits, bits);
    kind =
        type == LlrType::f32 ? LlrKind::f32 : (type == LlrType::i16 ? LlrKind::i16 : LlrKind::i8);
    channel_code.reserve(code.size());
    blocks.reserve(plan.blocks.size());
    const std::size_t width = type == LlrType::f32 ? 4 : (type == LlrType::i16 ? 2 : 1);
    llr.reserve(code.size() * width);
    cudaStream_t s = stream.get();
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(channel_code.get(), code.data(), code.size(), cudaMemcpyHostToDevice, s));
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(blocks.get(), plan.blocks.data(),
                                     plan.blocks.size() * sizeof(BlockDesc), cudaMemcpyHostToDevice,
                                     s));
    int max_K = 0;
    for (const auto& b : plan.blocks) max_K = std::max(max_K, b.K);
    const unsigned pairs = (3u * static_cast<unsigned>(max_K) + 12u + 1u) / 2u;
    const dim3 grid((pairs + cuda::kChannelThreads - 1) / cuda::kChannelThreads,
                    static_cast<unsigned>(plan.blocks.size()));
    const double ebn0 = std::pow(10.0, o.ebn0_db / 10.0);
    const bool qpsk = o.modulation == Modulation::qpsk;
    const float scale = std::ldexp(1.0f, frac_bits);
    switch (kind) {
      case LlrKind::f32:
        cuda::ChannelKernel<<<grid, cuda::kChannelThreads, 0, s>>>(
            blocks.get(), channel_code.get(), reinterpret_cast<float*>(llr.get()), ebn0, qpsk,
            o.seed, first_frame, 1.0f);
        break;
      case LlrKind::i16:
        cuda::ChannelKernel<<<grid, cuda::kChannelThreads, 0, s>>>(
            blocks.get(), channel_code.get(), reinterpret_cast<std::int16_t*>(llr.get()), ebn0,
            qpsk, o.seed, first_frame, scale);
        break;
      case LlrKind::i8:
        cuda::ChannelKernel<<<grid, cuda::kChannelThreads, 0, s>>>(
            blocks.get(), channel_code.get(), reinterpret_cast<std::int8_t*>(llr.get()), ebn0, qpsk,
            o.seed, first_frame, scale);
        break;
    }
    SIGPU_CUDA_CHECK_LAUNCH();
    load_crc_weights();
    loaded = true;
  }

  template <typename T>
  void load(std::span<const int> K, std::span<const T> host) {
    loaded = false;
    plan = make_plan(K, 1, host.size());  // P is chosen per run(); this checks K and the count
    check_llrs(plan, host);
    kind = std::is_same_v<T, float>
               ? LlrKind::f32
               : (std::is_same_v<T, std::int16_t> ? LlrKind::i16 : LlrKind::i8);
    llr.reserve(host.size_bytes());
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(llr.get(), host.data(), host.size_bytes(),
                                     cudaMemcpyHostToDevice, stream.get()));
    load_crc_weights();
    loaded = true;
  }

  template <typename T>
  void load_transport_block(std::span<const T> g, const TransportBlockParams& p, std::span<T> soft,
                            T filler_llr) {
    loaded = false;
    const auto cbs = plan_transport_block(p);
    if (static_cast<std::int64_t>(g.size()) != p.G)
      throw Error("turbo: transport block of A = " + std::to_string(p.A) + " got " +
                  std::to_string(g.size()) + " LLRs for G = " + std::to_string(p.G));
    std::vector<int> K;
    std::size_t entries = 0, total = 0;
    for (const auto& cb : cbs) {
      K.push_back(cb.K);
      entries += static_cast<std::size_t>(cb.N_cb);
      total += llr_count(cb.K);
    }
    if (soft.size() != entries)
      throw Error("turbo: transport block of A = " + std::to_string(p.A) + " needs " +
                  std::to_string(entries) + " soft buffer entries, got " +
                  std::to_string(soft.size()));
    if constexpr (std::is_same_v<T, float>) {
      for (std::size_t i = 0; i < g.size(); ++i)
        if (!std::isfinite(g[i]))
          throw Error("turbo: transport block LLR " + std::to_string(i) + " is " +
                      std::to_string(g[i]) + " (not finite)");
    }
    plan = make_plan(K, 1, total);
    kind = std::is_same_v<T, float>
               ? LlrKind::f32
               : (std::is_same_v<T, std::int16_t> ? LlrKind::i16 : LlrKind::i8);
    rm_blocks.reserve(cuda::rate_match_descriptor_bytes(cbs.size()));
    tb_llr.reserve(g.size_bytes());
    tb_soft.reserve(soft.size_bytes());
    llr.reserve(total * sizeof(T));
    cudaStream_t s = stream.get();
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(tb_llr.get(), g.data(), g.size_bytes(), cudaMemcpyHostToDevice, s));
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(tb_soft.get(), soft.data(), soft.size_bytes(), cudaMemcpyHostToDevice, s));
    T* d_soft = reinterpret_cast<T*>(tb_soft.get());
    cuda::de_rate_match_on_device<T>(cbs, p.rv, rm_blocks.get(),
                                     reinterpret_cast<const T*>(tb_llr.get()), d_soft,
                                     reinterpret_cast<T*>(llr.get()), filler_llr, s);
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(soft.data(), d_soft, soft.size_bytes(), cudaMemcpyDeviceToHost, s));
    load_crc_weights();  // waits for the stream
    loaded = true;
  }

  /// The CRC weights of early termination (CRC24B, then CRC24A), once; waits for the stream
  /// (the callers' host buffers go out of scope).
  void load_crc_weights() {
    if (crc_weights.capacity() == 0) {
      auto w = crc24_weights(kMaxK, BlockCrc::crc24b);
      const auto a = crc24_weights(kMaxK, BlockCrc::crc24a);
      w.insert(w.end(), a.begin(), a.end());
      crc_weights.reserve(w.size());
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(crc_weights.get(), w.data(), w.size() * 4,
                                       cudaMemcpyHostToDevice, stream.get()));
      stream.synchronize();
    }
    stream.synchronize();
  }

  cuda::EarlyStop early_stop(const DecoderOptions& o) {
    cuda::EarlyStop e;
    if (o.early_termination)
      e.weights = crc_weights.get() + (o.crc == BlockCrc::crc24a ? kMaxK : 0);
    e.min_iterations = o.min_iterations;
    e.done_at = done_at.get();
    return e;
  }

  template <class Tr>
  double run(const DecoderOptions& o) {
    using Llr = typename Tr::Llr;
    using M = typename Tr::Metric;
    std::vector<int> K;
    for (const auto& b : plan.blocks) K.push_back(b.K);
    const BatchPlan p = make_plan(K, o.subdecoders, plan.total_llr);  // same tables, new P
    blocks.reserve(p.blocks.size());
    const std::size_t ext_bytes = std::size_t(p.total_bits) * sizeof(Llr);
    const std::size_t bound_bytes = std::size_t(p.total_bounds) * 8 * 4 * sizeof(M);
    ext1.reserve(ext_bytes);
    ext2.reserve(ext_bytes);
    bounds.reserve(2 * bound_bytes);
    scratch.reserve(std::size_t(p.total_bits) * 8 * sizeof(M));
    bits.reserve(p.total_bits);
    if (o.output_llrs) llr_out.reserve(p.total_bits);
    done_at.reserve(p.blocks.size());
    cudaStream_t s = stream.get();
    std::vector<std::uint32_t> sub_of(p.total_subs);
    for (std::size_t b = 0; b < p.blocks.size(); ++b)
      for (int j = 0; j < p.blocks[b].P; ++j) sub_of[p.blocks[b].sub_offset + j] = std::uint32_t(b);
    sub_block.reserve(sub_of.size());
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(sub_block.get(), sub_of.data(), sub_of.size() * 4,
                                     cudaMemcpyHostToDevice, s));
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(blocks.get(), p.blocks.data(),
                                     p.blocks.size() * sizeof(BlockDesc), cudaMemcpyHostToDevice,
                                     s));
    SIGPU_CUDA_CHECK(cudaStreamSynchronize(s));  // host vector p goes out of scope

    HalfIteration<Tr> h;
    h.blocks = blocks.get();
    h.llr = reinterpret_cast<const Llr*>(llr.get());
    h.alpha_bounds = reinterpret_cast<M*>(bounds.get());
    h.beta_bounds = reinterpret_cast<M*>(bounds.get() + bound_bytes);
    h.total_bounds = p.total_bounds;
    h.scale = extrinsic_scale<Tr>(o);
    h.scale_q4 = scale_q4(o.scaling);
    Llr* e1 = reinterpret_cast<Llr*>(ext1.get());
    Llr* e2 = reinterpret_cast<Llr*>(ext2.get());
    M* sc = reinterpret_cast<M*>(scratch.get());
    const unsigned grid = (p.total_subs + cuda::kThreadsPerBlock - 1) / cuda::kThreadsPerBlock;

    float* llr_dst = o.output_llrs ? llr_out.get() : nullptr;
    cuda::EarlyStop stop = early_stop(o);
    if (o.sync == Sync::strict) {
      double seconds = 0;
      if (max_subdecoders(p) > cuda::kBlockThreads &&
          run_cluster_kernel<Tr>(p, o, llr_dst, stop, seconds)) {
        finish(p, o, "cluster");
        return seconds;
      }
      const std::size_t smem = block_kernel_smem(p);
      if (smem > 0 && !small_batch(p)) {
        const bool pairs = pair_kernel_takes<Tr>(p);
        seconds = run_block_kernel<Tr>(p, o, smem, llr_dst, stop, pairs);
        finish(p, o, pairs ? "pair" : "block");
        return seconds;
      }
    }
    if (o.sync == Sync::strict && grid <= resident_blocks(cuda::StrictPersistentKernel<Tr>)) {
      std::uint32_t ext_words = static_cast<std::uint32_t>(ext_bytes / 4);
      std::uint32_t bound_words = static_cast<std::uint32_t>(2 * bound_bytes / 4);
      const std::uint32_t* sub_ptr = sub_block.get();
      std::uint32_t total_subs = p.total_subs;
      int iters = o.iterations;
      std::uint8_t* bits_ptr = bits.get();
      int nblocks = static_cast<int>(p.blocks.size());
      void* args[] = {&h,  &e1,    &e2,       &ext_words, &bound_words, &sub_ptr, &total_subs,
                      &sc, &iters, &bits_ptr, &llr_dst,   &stop,        &nblocks};
      sigpu::cuda::EventTimer timer;
      timer.start(s);
      SIGPU_CUDA_CHECK(cudaLaunchCooperativeKernel(
          reinterpret_cast<const void*>(&cuda::StrictPersistentKernel<Tr>), grid,
          cuda::kThreadsPerBlock, args, 0, s));
      const double seconds = timer.stop(s);
      finish(p, o, "cooperative");
      return seconds;
    }

    // The whole decode (3 memsets, 12 launches in strict mode) is captured into a CUDA graph
    // before the timer starts, and the timed region replays it: no per-launch CPU overhead or
    // launch gaps between the half-iterations. Strict mode still has one kernel boundary per
    // half-iteration as its barrier, so its results do not change.
    cudaGraph_t graph = nullptr;
    SIGPU_CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(e1, 0, ext_bytes, s));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(e2, 0, ext_bytes, s));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(bounds.get(), 0, 2 * bound_bytes, s));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(done_at.get(), 0, p.blocks.size() * 4, s));
    if (o.sync == Sync::strict) {
      const std::int32_t* done = o.early_termination ? done_at.get() : nullptr;
      for (int it = 0; it < o.iterations; ++it) {
        for (int c = 0; c < 2; ++c) {
          h.select(it, c, e1, e2);
          const bool decide = c == 1 && stop.decides(it, o.iterations);
          h.bits = decide ? bits.get() : nullptr;
          h.llr_out = decide ? llr_dst : nullptr;
          cuda::HalfIterationKernel<Tr>
              <<<grid, cuda::kThreadsPerBlock, 0, s>>>(h, sub_block.get(), p.total_subs, sc, done);
          SIGPU_CUDA_CHECK_LAUNCH();
        }
        if (stop.checks(it, o.iterations)) {
          cuda::CrcCheckKernel<<<static_cast<unsigned>(p.blocks.size()), cuda::kCrcThreads, 0, s>>>(
              blocks.get(), bits.get(), stop.weights, done_at.get(), it + 1);
          SIGPU_CUDA_CHECK_LAUNCH();
        }
      }
    } else {
      h.llr_out = llr_dst;
      cuda::LooseKernel<Tr><<<grid, cuda::kThreadsPerBlock, 0, s>>>(
          h, e1, e2, sub_block.get(), p.total_subs, sc, o.iterations, bits.get());
      SIGPU_CUDA_CHECK_LAUNCH();
    }
    SIGPU_CUDA_CHECK(cudaStreamEndCapture(s, &graph));
    cudaGraphExec_t exec = nullptr;
    const cudaError_t inst = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    SIGPU_CUDA_CHECK(inst);
    SIGPU_CUDA_CHECK(cudaGraphUpload(exec, s));
    sigpu::cuda::EventTimer timer;
    timer.start(s);
    const cudaError_t launched = cudaGraphLaunch(exec, s);
    if (launched != cudaSuccess) cudaGraphExecDestroy(exec);
    SIGPU_CUDA_CHECK(launched);
    const double seconds = timer.stop(s);
    cudaGraphExecDestroy(exec);
    finish(p, o, o.sync == Sync::strict ? "half-iterations" : "loose");
    return seconds;
  }

  /// The float extrinsic scaling: log-MAP's extrinsics are exact and go unscaled, as on the CPU.
  template <class Tr>
  static float extrinsic_scale(const DecoderOptions& o) {
    return Tr::kLogMap ? 1.0f : o.scaling;
  }

  static int max_subdecoders(const BatchPlan& p) {
    int max_P = 0;
    for (const auto& b : p.blocks) max_P = std::max(max_P, b.P);
    return max_P;
  }

  /// A batch of P > kBlockThreads that the cluster kernel does not take (P over 1024, or more
  /// clusters than the device holds at once) and that would leave most SMs idle on the block
  /// kernel decodes faster on the cooperative kernel, which spreads a code block over several
  /// SMs. On the H100 (K = 6144, P = 768, docs/turbo.md) the cooperative kernel took 58-66 us
  /// for one block and 70-85 us for 8, and its time grows with the sub-decoders per SM (96
  /// blocks: 208-267 us); the block kernel takes 87-91 us for any batch up to one code block per
  /// SM. The largest batch measured where the cooperative kernel won, 8 x 768 sub-decoders, is
  /// the limit.
  static bool small_batch(const BatchPlan& p) {
    return max_subdecoders(p) > cuda::kBlockThreads && p.total_subs <= kCooperativeMaxSubs;
  }
  static constexpr std::uint32_t kCooperativeMaxSubs = 8 * 768;

  /// Dynamic shared memory StrictBlockKernel needs for the batch, or 0 where it does not apply:
  /// more than a thread block can have (large P), or fewer sub-decoders than a warp (the kernel
  /// puts a code block on one SM, so P = 1 would run one thread per SM where the other kernels
  /// run hundreds).
  std::size_t block_kernel_smem(const BatchPlan& p) const {
    int max_K = 0;
    for (const auto& b : p.blocks) max_K = std::max(max_K, b.K);
    const int max_P = max_subdecoders(p);
    if (max_P < cuda::kBlockKernelMinP) return 0;
    const std::size_t smem = cuda::BlockSmem::bytes(max_K, max_P);
    int optin = 0;
    SIGPU_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    return smem <= static_cast<std::size_t>(optin) ? smem : 0;
  }

  /// Whether StrictPairKernel takes the batch: int8 LLRs (16-bit metrics are exact for them
  /// only) and every block's sub-blocks whole windows.
  template <class Tr>
  static bool pair_kernel_takes(const BatchPlan& p) {
    if constexpr (!std::is_same_v<Tr, FixedTraits<std::int8_t>>) {
      return false;
    } else {
      return std::all_of(p.blocks.begin(), p.blocks.end(),
                         [](const BlockDesc& b) { return cuda::pair_kernel_fits(b.K, b.P); });
    }
  }

  /// Strict mode, one thread block per code block, all iterations (block_kernel.cuh; with
  /// pairs, pair_kernel.cuh). Returns the device seconds of the launch.
  template <class Tr>
  double run_block_kernel(const BatchPlan& p, const DecoderOptions& o, std::size_t smem,
                          float* llr_dst, const cuda::EarlyStop& stop, bool pairs) {
    const int subs = pairs ? max_subdecoders(p) / 2 : max_subdecoders(p);
    const int threads = std::min(cuda::kBlockThreads, (subs + 31) / 32 * 32);
    const auto* in = reinterpret_cast<const typename Tr::Llr*>(llr.get());
    sigpu::cuda::EventTimer timer;
    const auto launch = [&](auto kernel, auto... args) {
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(smem)));
      timer.start(stream.get());
      kernel<<<static_cast<unsigned>(p.blocks.size()), threads, smem, stream.get()>>>(
          blocks.get(), in, o.iterations, extrinsic_scale<Tr>(o), scale_q4(o.scaling), args...,
          bits.get(), llr_dst, stop);
      SIGPU_CUDA_CHECK_LAUNCH();
    };
    if constexpr (std::is_same_v<Tr, FixedTraits<std::int8_t>>) {
      if (pairs) {
        launch(cuda::StrictPairKernel<Tr>);
        return timer.stop(stream.get());
      }
    }
    launch(cuda::StrictBlockKernel<Tr>, reinterpret_cast<typename Tr::Metric*>(scratch.get()));
    return timer.stop(stream.get());
  }

  /// Strict mode with each code block on one thread block cluster (cluster_kernel.cuh), where P
  /// needs at most kMaxClusterBlocks thread blocks and the device holds every block's cluster at
  /// once: up to one wave it beats the block kernel, which runs P > kBlockThreads in rounds on
  /// one SM (H100, K = 6144, P = 768: 44 us for 1 to 8 blocks against 80-90 us). Returns whether
  /// it ran (and its device seconds).
  template <class Tr>
  bool run_cluster_kernel(const BatchPlan& p, const DecoderOptions& o, float* llr_dst,
                          const cuda::EarlyStop& stop, double& seconds) {
    std::size_t smem = 0;
    const int Q = (max_subdecoders(p) + cuda::kClusterThreads - 1) / cuda::kClusterThreads;
    if (Q > cuda::kMaxClusterBlocks) return false;
    for (const auto& b : p.blocks)
      smem = std::max(smem, cuda::ClusterSmem::bytes(b.K, 1 << cuda::cluster_slice_shift(b.K, Q),
                                                     cuda::kClusterThreads));
    int optin = 0;
    SIGPU_CUDA_CHECK(
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (smem > static_cast<std::size_t>(optin)) return false;
    const auto kernel = cuda::StrictClusterKernel<Tr>;
    SIGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(p.blocks.size() * Q));
    cfg.blockDim = dim3(cuda::kClusterThreads);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream.get();
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = static_cast<unsigned>(Q);
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();  // no clusters on this device: another kernel
      return false;
    }
    if (static_cast<std::size_t>(clusters) < p.blocks.size()) return false;
    sigpu::cuda::EventTimer timer;
    timer.start(stream.get());
    SIGPU_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, static_cast<const BlockDesc*>(blocks.get()),
                                        reinterpret_cast<const typename Tr::Llr*>(llr.get()),
                                        o.iterations, extrinsic_scale<Tr>(o), scale_q4(o.scaling),
                                        reinterpret_cast<typename Tr::Metric*>(scratch.get()),
                                        bits.get(), llr_dst, stop));
    seconds = timer.stop(stream.get());
    return true;
  }

  /// Records what the run made; with early termination reads back where each block stopped.
  void finish(const BatchPlan& p, const DecoderOptions& o, const char* ran) {
    bits_count = p.total_bits;
    have_llrs = o.output_llrs;
    kernel = ran;
    iterations.assign(p.blocks.size(), o.iterations);
    if (o.early_termination) {
      std::vector<std::int32_t> done(p.blocks.size());
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(done.data(), done_at.get(), done.size() * 4,
                                       cudaMemcpyDeviceToHost, stream.get()));
      stream.synchronize();
      for (std::size_t b = 0; b < done.size(); ++b)
        if (done[b]) iterations[b] = done[b];
    }
  }

  /// Thread blocks of `kernel` the device holds at once (all SMs).
  template <typename Kernel>
  unsigned resident_blocks(Kernel kernel) const {
    int per_sm = 0, sms = 0;
    SIGPU_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, cuda::kThreadsPerBlock, 0));
    SIGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return static_cast<unsigned>(per_sm) * static_cast<unsigned>(sms);
  }

  std::uint32_t bits_count = 0;
  bool have_llrs = false;
  const char* kernel = "";
  std::vector<int> iterations;
};

CudaDecoder::CudaDecoder(int device) {
  const auto devices = cuda_devices();
  if (devices.empty())
    throw UnsupportedError("the cuda backend is not available: no CUDA device on this machine");
  if (device < 0 || device >= static_cast<int>(devices.size()))
    throw Error("turbo: CUDA device " + std::to_string(device) + " is not available (" +
                std::to_string(devices.size()) + " device(s) visible)");
  SIGPU_CUDA_CHECK(cudaSetDevice(device));
  impl_ = std::make_unique<Impl>(device);
}
CudaDecoder::~CudaDecoder() = default;
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;

void CudaDecoder::load(std::span<const int> K, std::span<const float> llr) {
  impl_->load(K, llr);
}
void CudaDecoder::load(std::span<const int> K, std::span<const std::int16_t> llr) {
  impl_->load(K, llr);
}
void CudaDecoder::load(std::span<const int> K, std::span<const std::int8_t> llr) {
  impl_->load(K, llr);
}
void CudaDecoder::load_channel(std::span<const int> K, std::span<const std::uint8_t> codewords,
                               const ChannelOptions& o, std::uint64_t first_frame, LlrType type,
                               int frac_bits) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->load_channel(K, codewords, o, first_frame, type, frac_bits);
}

void CudaDecoder::load_transport_block(std::span<const float> llr, const TransportBlockParams& p,
                                       std::span<float> soft, float filler_llr) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->load_transport_block(llr, p, soft, filler_llr);
}
void CudaDecoder::load_transport_block(std::span<const std::int16_t> llr,
                                       const TransportBlockParams& p, std::span<std::int16_t> soft,
                                       std::int16_t filler_llr) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->load_transport_block(llr, p, soft, filler_llr);
}
void CudaDecoder::load_transport_block(std::span<const std::int8_t> llr,
                                       const TransportBlockParams& p, std::span<std::int8_t> soft,
                                       std::int8_t filler_llr) {
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  impl_->load_transport_block(llr, p, soft, filler_llr);
}

double CudaDecoder::run(const DecoderOptions& o) {
  if (!impl_->loaded) throw Error("turbo: CudaDecoder::run before load");
  check_options(o);
  if (o.algorithm == Algorithm::log_map && impl_->kind != LlrKind::f32)
    throw Error("turbo: log-map needs float LLRs (the fixed-point decoders are max-log-map)");
  if (o.int8_metrics == Int8Metrics::saturating && impl_->kind == LlrKind::i8)
    throw UnsupportedError("turbo: saturating int8 metrics run on the CPU only, not with cuda");
  SIGPU_CUDA_CHECK(cudaSetDevice(impl_->device));
  switch (impl_->kind) {
    case LlrKind::f32:
      if (o.algorithm == Algorithm::log_map) return impl_->run<LogMapTraits>(o);
      return impl_->run<FloatTraits>(o);
    case LlrKind::i16:
      return impl_->run<FixedTraits<std::int16_t>>(o);
    case LlrKind::i8:
      return impl_->run<FixedTraits<std::int8_t>>(o);
  }
  return 0;
}

namespace {
template <typename T>
std::vector<T> to_host(const sigpu::cuda::DeviceBuffer<T>& src, std::size_t n,
                       sigpu::cuda::Stream& stream) {
  std::vector<T> out(n);
  if (n) {
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(out.data(), src.get(), n * sizeof(T), cudaMemcpyDeviceToHost,
                                     stream.get()));
    stream.synchronize();
  }
  return out;
}
}  // namespace

std::vector<std::uint8_t> CudaDecoder::bits() const {
  return to_host(impl_->bits, impl_->bits_count, impl_->stream);
}
std::vector<float> CudaDecoder::llrs() const {
  return to_host(impl_->llr_out, impl_->have_llrs ? impl_->bits_count : 0, impl_->stream);
}
std::vector<int> CudaDecoder::iterations() const {
  return impl_->iterations;
}
std::string_view CudaDecoder::kernel() const {
  return impl_->kernel;
}

}  // namespace sigpu::turbo
