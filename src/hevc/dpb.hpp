// The reference side of the decoded picture buffer: reference picture set marking (8.3.2) and
// reference picture list construction (8.3.4). Output order and bumping stay with the decoder.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hevc/picture.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

struct DpbEntry {
  std::shared_ptr<DecodedPicture> pic;
  bool long_term = false;
};

/// RefPicSetStCurrBefore, RefPicSetStCurrAfter and RefPicSetLtCurr of the current picture.
struct RefPicSet {
  std::vector<std::shared_ptr<DecodedPicture>> st_before, st_after, lt_curr;
};

/// Makes a picture for a missing reference of the given POC (8.3.3), or null when it cannot.
using MakeMissing = std::function<std::shared_ptr<DecodedPicture>(int poc, bool long_term)>;

/// Applies the current picture's RPS to `dpb` (8.3.2): entries it does not name are removed
/// (and returned in `dropped`), long-term ones marked; missing pictures the current picture uses
/// are made with make_missing and each is described in `missing`.
RefPicSet apply_rps(std::vector<DpbEntry>& dpb, const SliceHeader& sh, int poc,
                    int log2_max_poc_lsb, const MakeMissing& make_missing,
                    std::vector<std::shared_ptr<DecodedPicture>>& dropped,
                    std::vector<std::string>& missing);

/// RefPicList0 and RefPicList1 of a P or B slice (8.3.4), with list modification.
RefPicLists build_ref_lists(const RefPicSet& rps, const SliceHeader& sh);

}  // namespace sigpu::hevc
