// How fast this machine copies and sums 1 MiB: memcpy and the engine's float32, int32 and uint8
// sum kernels, best of 5. bench/verbs_bench.sh's note on float32 comes from running it inside the
// soft-RoCE VM, where QEMU TCG emulates float SIMD in software.   Usage: build/reduce_speed
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "collectives/reduce.h"
#include "common/clock.h"
#include "common/main_fence.h"

namespace {

template <typename Body>
double bestMicroseconds(Body body) {
  double best = 1e18;
  for (int rep = 0; rep < 5; ++rep) {
    int64_t start = nshim::nowNs();
    body();
    best = std::min(best, (nshim::nowNs() - start) / 1e3);
  }
  return best;
}

int run(int argc, char** argv) {
  if (argc > 1) {
    std::printf("usage: %s\nTimes memcpy and the float32/int32/uint8 sum kernels on 1 MiB (best of 5).\n", argv[0]);
    return std::strcmp(argv[1], "--help") == 0 ? 0 : 2;
  }
  using nshim::DataType;
  const size_t bytes = 1 << 20;
  std::vector<char> a(bytes, 1), b(bytes, 2), out(bytes);
  std::vector<float> fa(bytes / 4, 1.5f), fb(bytes / 4, 2.5f);
  auto sum = [&](DataType type, const void* x, const void* y, size_t count) {
    return bestMicroseconds([&] { nshim::reduceTo(type, nshim::ReduceKind::kSum, out.data(), x, y, count); });
  };
  double copy = bestMicroseconds([&] { std::memcpy(out.data(), a.data(), bytes); });
  double f32 = sum(DataType::kFloat32, fa.data(), fb.data(), bytes / 4);
  double i32 = sum(DataType::kInt32, a.data(), b.data(), bytes / 4);
  double u8 = sum(DataType::kUint8, a.data(), b.data(), bytes);
  std::printf("1 MiB: memcpy %.0f us, float32 sum %.0f us, int32 sum %.0f us, uint8 sum %.0f us\n", copy, f32, i32, u8);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("reduce_speed", [&] { return run(argc, argv); });
}
