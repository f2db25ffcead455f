// The CLI's writer thread (tools/sigpu/writer_thread.hpp): order kept at every depth, the
// writer's first exception rethrown on the caller's thread with nothing written after it, and
// everything pushed written when the caller's side throws.
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "../tools/sigpu/writer_thread.hpp"

namespace sigpu::cli {
namespace {

using Item = std::vector<int>;  ///< every element its index in the stream

TEST(WriterThread, WritesEveryItemInOrderAtEveryDepth) {
  for (const std::size_t depth : {1, 2, 3, 4}) {
    std::vector<int> written;
    WriterThread<Item> w(depth, [&](const Item& item) {
      for (int x : item) ASSERT_EQ(x, item.front()) << "an item changed while it was written";
      written.push_back(item.front());
    });
    for (int i = 0; i < 1000; ++i) w.push(Item(50 + i % 7 * 300, i));  // sizes change
    w.finish();
    ASSERT_EQ(written.size(), 1000u) << "depth " << depth;
    for (int i = 0; i < 1000; ++i) ASSERT_EQ(written[i], i) << "depth " << depth;
  }
}

// take() hands the caller back an item already written (or a default one), nothing copied.
TEST(WriterThread, TakeGivesBackAnItemWrittenBefore) {
  std::vector<int> written;
  WriterThread<Item> w(2, [&](const Item& item) { written.push_back(item.front()); });
  std::vector<const int*> storage;
  for (int i = 0; i < 200; ++i) {
    Item item(100, i);
    storage.push_back(item.data());
    w.take(item);
    if (item.empty()) continue;
    ASSERT_LT(item.front(), i) << "an item not yet pushed came back";
    ASSERT_EQ(item.data(), storage[static_cast<std::size_t>(item.front())]) << "it was copied";
  }
  w.finish();
  ASSERT_EQ(written.size(), 200u);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(written[static_cast<std::size_t>(i)], i);
}

TEST(WriterThread, TheWritersErrorReachesTheCaller) {
  for (const std::size_t depth : {1, 3}) {
    int written = 0;
    WriterThread<Item> w(depth, [&](const Item& item) {
      if (item.front() == 100) throw std::runtime_error("disk full");
      ++written;
    });
    bool thrown = false;
    try {
      for (int i = 0; i < 1000; ++i) w.push(Item(10, i));
      w.finish();
    } catch (const std::runtime_error& e) {
      thrown = true;
      EXPECT_STREQ(e.what(), "disk full");
    }
    EXPECT_TRUE(thrown) << "depth " << depth;
    EXPECT_EQ(written, 100) << "nothing is written after the error";
    EXPECT_THROW(w.finish(), std::runtime_error) << "finish() reports it too";
  }
}

TEST(WriterThread, WhatWasPushedIsWrittenWhenTheCallerThrows) {
  int written = 0;
  try {
    WriterThread<Item> w(3, [&](const Item&) { ++written; });
    for (int i = 0; i < 100; ++i) w.push(Item(10, i));
    throw std::logic_error("the decoder failed");
  } catch (const std::logic_error&) {
  }
  EXPECT_EQ(written, 100);
}

}  // namespace
}  // namespace sigpu::cli
