// Random point-to-point batches for the PXN tests (pxn_point_to_point_test.cc, pxn_relay_test.cc):
// one transfer, the bytes it carries, and a rank's share of a batch in a shuffled order that keeps
// each pair's transfers in their order (the transports match a pair's messages in issue order).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

namespace nshim::testing {

// One transfer of a batch: from `from` to `to`, the `index`-th of that pair, on `channels` (0: as
// NCCL splits it).
struct Transfer {
  int from, to, index;
  size_t bytes;
  int channels = 0;
};

// Byte i of transfer t: differs between transfers, pairs and positions.
inline uint8_t byteOf(const Transfer& t, size_t i) {
  uint64_t x = (uint64_t(t.from) << 48) ^ (uint64_t(t.to) << 40) ^ (uint64_t(t.index) << 32) ^ i;
  x *= 0x9E3779B97F4A7C15ull;
  return static_cast<uint8_t>(x >> 56);
}

// The transfers `rank` sends or receives, shuffled by `seed`, then each pair's transfers put back
// in their order on the places the shuffle gave that pair.
inline std::vector<const Transfer*> rankShareShuffled(const std::vector<Transfer>& batch, int rank, uint32_t seed) {
  std::vector<const Transfer*> mine;
  for (const Transfer& t : batch) {
    if (t.from == rank || t.to == rank) mine.push_back(&t);
  }
  std::mt19937 rng(seed + 1000 * static_cast<uint32_t>(rank));
  std::shuffle(mine.begin(), mine.end(), rng);
  std::map<std::pair<int, int>, int> taken;
  std::vector<const Transfer*> ordered;
  for (const Transfer* t : mine) {
    const int k = taken[{t->from, t->to}]++;
    ordered.push_back(&*std::find_if(batch.begin(), batch.end(), [&](const Transfer& u) {
      return u.from == t->from && u.to == t->to && u.index == k;
    }));
  }
  return ordered;
}

}  // namespace nshim::testing
