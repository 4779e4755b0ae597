// NCCL's Simple ring slices (model/ring_slices.h) against what NCCL 2.28 sent, per channel, in its
// step log on the H200 machine (NCCLSHIM_PROFILER_STEPS, 2 ranks, 2 channels, float32): the message
// sizes of one rank's ring step on each channel.
#include <algorithm>
#include <vector>

#include "model/ring_slices.h"
#include "tests/catch.h"

namespace nshim {
namespace {

// The message sizes (bytes) of channel c, in order.
std::vector<size_t> bytesOnChannel(const std::vector<RingSlice>& slices, int channel) {
  std::vector<size_t> bytes;
  for (const RingSlice& s : slices) {
    if (s.channel == channel) bytes.push_back(s.elems * 4);
  }
  return bytes;
}

TEST_CASE("ring slices: NCCL's messages per channel for a rank's block", "[model][ringslices]") {
  constexpr size_t kSlice = 1 << 20;  // NCCL Simple: 2 steps of NCCL_BUFFSIZE / 8
  struct Case {
    size_t blockBytes;               // one rank's block (an allgather of 2 x this)
    std::vector<size_t> perChannel;  // NCCL's messages on each of the 2 channels
  };
  const std::vector<Case> cases = {
      {32 << 10, {16 << 10, 0}},                        // allgather 64 KiB
      {64 << 10, {32 << 10, 0}},                        // allgather 128 KiB
      {512 << 10, {128 << 10, 128 << 10}},              // allgather 1 MiB
      {1 << 20, {256 << 10, 256 << 10}},                // allgather 2 MiB
      {8 << 20, {1 << 20, 1 << 20, 1 << 20, 1 << 20}},  // allgather 16 MiB
  };
  for (const Case& c : cases) {
    INFO("block " << c.blockBytes << " bytes");
    const std::vector<RingSlice> slices = ncclSimpleRingSlices(c.blockBytes / 4, 4, 2, kSlice);
    CHECK(bytesOnChannel(slices, 0) == c.perChannel);
    CHECK(bytesOnChannel(slices, 1) == c.perChannel);
  }
  // 128 MiB per rank: 64 messages of 1 MiB on each channel (NCCL's 256 MiB allgather).
  CHECK(bytesOnChannel(ncclSimpleRingSlices((128 << 20) / 4, 4, 2, kSlice), 1) == std::vector<size_t>(64, 1 << 20));
}

// A ring allreduce block sends its slice of a chunk at every step (2 steps on 2 ranks): NCCL's step
// log shows per channel 16K 0 16K 0 (64 KiB), 4 x 128K (1 MiB), 8 x 1M (16 MiB).
TEST_CASE("ring slices: NCCL's allreduce messages per channel", "[model][ringslices]") {
  struct Case {
    size_t bytes;
    std::vector<size_t> blockBytes;  // each block's slice, in order, on one channel
  };
  const std::vector<Case> cases = {
      {64 << 10, {16 << 10, 0}}, {1 << 20, {128 << 10, 128 << 10}}, {16 << 20, {1 << 20, 1 << 20, 1 << 20, 1 << 20}}};
  for (const Case& c : cases) {
    INFO(c.bytes << " bytes");
    const std::vector<RingLoopSlice> blocks = ncclSimpleAllReduceSlices(c.bytes / 4, 4, 2, 2, 1 << 20);
    for (int channel : {0, 1}) {
      std::vector<size_t> sizes;
      for (const RingLoopSlice& b : blocks) {
        if (b.channel == channel) sizes.push_back(b.elems * 4);
      }
      CHECK(sizes == c.blockBytes);
    }
  }
  // Every element in exactly one block's chunk, for odd sizes and rank counts.
  for (size_t count : {size_t{1}, size_t{13}, size_t{100003}, size_t{(5 << 20) + 7}}) {
    for (int n : {2, 3, 7}) {
      INFO(count << " elements on " << n << " ranks");
      std::vector<int> covered(count, 0);
      for (const RingLoopSlice& b : ncclSimpleAllReduceSlices(count, 4, n, 2, 1 << 20)) {
        for (int j = 0; j < n; ++j) {
          const size_t lo = std::min(b.base + j * b.stride + b.begin, b.end);
          const size_t hi = std::min(lo + b.elems, b.end);
          for (size_t i = lo; i < hi; ++i) ++covered[i];
        }
      }
      CHECK(std::count(covered.begin(), covered.end(), 1) == static_cast<long>(count));
    }
  }
}

TEST_CASE("ring slices: every element once, channels interleaved, odd sizes", "[model][ringslices]") {
  for (size_t elems : {size_t{1}, size_t{7}, size_t{1000}, size_t{(3 << 20) + 5}}) {
    for (int channels : {1, 2, 3, 8}) {
      INFO(elems << " elements on " << channels << " channels");
      const std::vector<RingSlice> slices = ncclSimpleRingSlices(elems, 2, channels, 1 << 20);
      std::vector<int> covered(elems, 0);
      for (const RingSlice& s : slices) {
        REQUIRE(s.begin + s.elems <= elems);
        for (size_t i = s.begin; i < s.begin + s.elems; ++i) ++covered[i];
        CHECK(s.elems <= (1 << 20) / 2);  // never over a slice
      }
      CHECK(std::count(covered.begin(), covered.end(), 1) == static_cast<long>(elems));
      CHECK(slices.size() % 2 == 0);  // two per chunk
      if (slices.size() >= 4 && channels > 1) CHECK(slices[2].channel != slices[0].channel);
    }
  }
  CHECK(ncclSimpleRingSlices(0, 4, 2, 1 << 20).empty());
}

}  // namespace
}  // namespace nshim
