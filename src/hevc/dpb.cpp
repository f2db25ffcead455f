#include "hevc/dpb.hpp"

#include <algorithm>

#include "hevc/errors.hpp"

namespace sigpu::hevc {

RefPicSet apply_rps(std::vector<DpbEntry>& dpb, const SliceHeader& sh, int poc,
                    int log2_max_poc_lsb, const MakeMissing& make_missing,
                    std::vector<std::shared_ptr<DecodedPicture>>& dropped,
                    std::vector<std::string>& missing) {
  const int lsb_mask = (1 << log2_max_poc_lsb) - 1;
  RefPicSet out;
  std::vector<bool> keep(dpb.size(), false);
  auto find = [&](auto&& match) -> int {
    for (std::size_t i = 0; i < dpb.size(); ++i)
      if (match(dpb[i])) return static_cast<int>(i);
    return -1;
  };
  // Long-term pictures first (8-5): they may be short-term ones that become long-term.
  std::vector<std::shared_ptr<DecodedPicture>> lt_foll;
  for (int i = 0; i < sh.num_long_term; ++i) {
    const LongTermRef& lt = sh.long_term[static_cast<std::size_t>(i)];
    const int target = lt.msb_present ? poc + lt.poc : lt.poc;
    const int k = find([&](const DpbEntry& e) {
      return lt.msb_present ? e.pic->poc == target : (e.pic->poc & lsb_mask) == target;
    });
    std::shared_ptr<DecodedPicture> p;
    if (k >= 0) {
      dpb[static_cast<std::size_t>(k)].long_term = true;
      keep[static_cast<std::size_t>(k)] = true;
      p = dpb[static_cast<std::size_t>(k)].pic;
    } else if (lt.used) {
      // Without the MSB the POC is only known modulo MaxPicOrderCntLsb: take the nearest.
      const int full = lt.msb_present ? target : poc - ((poc - target) & lsb_mask);
      missing.push_back("long-term reference picture POC " + std::to_string(full));
      p = make_missing(full, true);
      if (p) {
        dpb.push_back({p, true});
        keep.push_back(true);
      }
    }
    if (p) (lt.used ? out.lt_curr : lt_foll).push_back(p);
  }
  for (int i = 0; i < sh.st_rps.num_delta_pocs(); ++i) {
    const int target = poc + sh.st_rps.delta_poc[static_cast<std::size_t>(i)];
    const bool used = sh.st_rps.used[static_cast<std::size_t>(i)];
    const int k = find([&](const DpbEntry& e) { return !e.long_term && e.pic->poc == target; });
    std::shared_ptr<DecodedPicture> p;
    if (k >= 0) {
      keep[static_cast<std::size_t>(k)] = true;
      p = dpb[static_cast<std::size_t>(k)].pic;
    } else if (used) {
      missing.push_back("reference picture POC " + std::to_string(target));
      p = make_missing(target, false);
      if (p) {
        dpb.push_back({p, false});
        keep.push_back(true);
      }
    }
    if (p && used) (i < sh.st_rps.num_negative ? out.st_before : out.st_after).push_back(p);
  }
  std::vector<DpbEntry> kept;
  for (std::size_t i = 0; i < dpb.size(); ++i) {
    if (keep[i])
      kept.push_back(std::move(dpb[i]));
    else
      dropped.push_back(std::move(dpb[i].pic));
  }
  dpb = std::move(kept);
  return out;
}

RefPicLists build_ref_lists(const RefPicSet& rps, const SliceHeader& sh) {
  RefPicLists lists;
  const int total =
      static_cast<int>(rps.st_before.size() + rps.st_after.size() + rps.lt_curr.size());
  for (int l = 0; l < (sh.slice_type == 0 ? 2 : 1); ++l) {
    if (total == 0) break;
    const int n_temp = std::max(sh.num_ref_idx[l], total);
    std::vector<std::shared_ptr<DecodedPicture>> temp;
    std::vector<bool> temp_lt;
    const auto& first = l == 0 ? rps.st_before : rps.st_after;
    const auto& second = l == 0 ? rps.st_after : rps.st_before;
    while (static_cast<int>(temp.size()) < n_temp) {
      for (const auto* set : {&first, &second, &rps.lt_curr})
        for (const auto& p : *set) {
          if (static_cast<int>(temp.size()) >= n_temp) break;
          temp.push_back(p);
          temp_lt.push_back(set == &rps.lt_curr);
        }
    }
    lists.size[l] = sh.num_ref_idx[l];
    for (int i = 0; i < sh.num_ref_idx[l]; ++i) {
      const int k = sh.list_modification[l] ? sh.list_entry[l][static_cast<std::size_t>(i)] : i;
      if (k >= static_cast<int>(temp.size()))
        throw DecodeError("list_entry_lX: entry " + std::to_string(k) + " beyond the " +
                          std::to_string(temp.size()) + " reference pictures");
      lists.pic[l][i] = temp[static_cast<std::size_t>(k)];
      lists.long_term[l][i] = temp_lt[static_cast<std::size_t>(k)];
      lists.poc[l][i] = lists.pic[l][i]->poc;
    }
  }
  return lists;
}

}  // namespace sigpu::hevc
