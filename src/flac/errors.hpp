// Why a frame failed, as a small code usable on host and device.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::flac {

enum class FrameError : std::uint8_t {
  ok = 0,
  truncated,            ///< the data ends inside the frame
  bad_sync,             ///< no frame sync code here
  reserved_bit,         ///< a reserved header bit is set
  bad_block_size,       ///< reserved or out-of-range block size code
  bad_sample_rate,      ///< reserved sample rate code
  bad_channels,         ///< reserved channel assignment
  bad_sample_size,      ///< reserved sample size code
  bad_number,           ///< malformed UTF-8 coded frame/sample number
  header_crc,           ///< CRC-8 of the header does not match
  params_missing,       ///< header defers to STREAMINFO, but there is none
  bad_subframe_type,    ///< reserved subframe type or padding bit set
  bad_wasted_bits,      ///< wasted bits not smaller than the sample size
  bad_order,            ///< predictor order larger than the block
  bad_lpc_precision,    ///< LPC coefficient precision code 15
  bad_lpc_shift,        ///< negative LPC shift
  bad_residual_coding,  ///< reserved residual coding method
  bad_partition_order,  ///< partitions do not divide the block, or are too short
  rice_overflow,        ///< a residual does not fit in 32 bits
  bad_padding,          ///< non-zero bits after the last subframe
  frame_crc,            ///< CRC-16 of the frame does not match
  length_mismatch,      ///< the subframes end before or after the next frame begins
  block_size_change,    ///< a fixed-block-size stream changes block size before its last frame
  relink,               ///< internal: the frame verifies but ends elsewhere than the search linked
};

/// Damage::what of bytes after the last frame that do not start one: no samples are lost, but
/// libFLAC loses sync there and `flac -t` fails, so it is damage, not a warning.
inline constexpr const char* kAfterLastFrame = "the bytes after the last frame are not a frame";

SIGPU_HD inline const char* describe(FrameError e) {
  switch (e) {
    case FrameError::ok:
      return "ok";
    case FrameError::truncated:
      return "data ends inside the frame";
    case FrameError::bad_sync:
      return "no frame sync code";
    case FrameError::reserved_bit:
      return "reserved header bit set";
    case FrameError::bad_block_size:
      return "invalid block size code";
    case FrameError::bad_sample_rate:
      return "invalid sample rate code";
    case FrameError::bad_channels:
      return "reserved channel assignment";
    case FrameError::bad_sample_size:
      return "reserved sample size code";
    case FrameError::bad_number:
      return "malformed coded frame/sample number";
    case FrameError::header_crc:
      return "header CRC-8 mismatch";
    case FrameError::params_missing:
      return "header refers to STREAMINFO but there is none";
    case FrameError::bad_subframe_type:
      return "reserved subframe type";
    case FrameError::bad_wasted_bits:
      return "wasted bits not smaller than sample size";
    case FrameError::bad_order:
      return "predictor order larger than block size";
    case FrameError::bad_lpc_precision:
      return "invalid LPC coefficient precision";
    case FrameError::bad_lpc_shift:
      return "negative LPC shift";
    case FrameError::bad_residual_coding:
      return "reserved residual coding method";
    case FrameError::bad_partition_order:
      return "invalid Rice partition order";
    case FrameError::rice_overflow:
      return "residual does not fit in 32 bits";
    case FrameError::bad_padding:
      return "non-zero frame padding";
    case FrameError::frame_crc:
      return "frame CRC-16 mismatch";
    case FrameError::length_mismatch:
      return "frame length does not match its subframes";
    case FrameError::block_size_change:
      return "block size changes in a fixed-block-size stream";
    case FrameError::relink:
      return "frame ends elsewhere than its header chain says";
  }
  return "unknown error";
}

}  // namespace sigpu::flac
