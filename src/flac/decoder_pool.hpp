// CudaDecoders kept between calls of the free functions (decode, decode_batch, the ranges, the
// parts of a multi-device decode). Building one costs a stream, CRC tables, device buffers and
// pinned staging: milliseconds that a loader cutting one clip per call would pay every time.
// A lease takes an idle decoder of its device, or builds one, and gives it back when it ends
// (unless an exception is passing: a decode cut short is not trusted again);
// release_gpu_memory() frees the idle ones.
#pragma once

#include <memory>

#include <sigpu/flac.hpp>

namespace sigpu::flac {

class DecoderLease {
 public:
  explicit DecoderLease(int device);
  ~DecoderLease();
  DecoderLease(const DecoderLease&) = delete;
  DecoderLease& operator=(const DecoderLease&) = delete;

  CudaDecoder& operator*() { return *decoder_; }
  CudaDecoder* operator->() { return decoder_.get(); }

 private:
  int device_;
  int exceptions_;
  std::unique_ptr<CudaDecoder> decoder_;
};

}  // namespace sigpu::flac
