// Launches of the rate matching kernels (rate_match_kernel.cuh, compiled in rate_match.cu alone)
// for the decoder's transport block path.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <span>

#include <sigpu/turbo.hpp>

namespace sigpu::turbo::cuda {

/// Bytes of device memory the descriptors of `code_blocks` code blocks take.
std::size_t rate_match_descriptor_bytes(std::size_t code_blocks);

/// The receive side of one transmission (redundancy version rv) on stream s: copies the
/// descriptors of cbs (plan_transport_block()) to d_blocks (rate_match_descriptor_bytes), adds
/// the G soft bits at d_llr into the soft buffers at d_soft (their N_cb per code block,
/// concatenated; updated in place) and writes the code blocks' d0 | d1 | d2 LLRs to d_out,
/// filler bits as filler_llr. Every pointer is device memory.
template <typename T>
void de_rate_match_on_device(std::span<const CodeBlockPlan> cbs, int rv, void* d_blocks,
                             const T* d_llr, T* d_soft, T* d_out, T filler_llr, cudaStream_t s);

}  // namespace sigpu::turbo::cuda
