// Implementation of the per-rank collective check: input patterns, references, comparison.
#include "tests/collectives/collective_check.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "collectives/collectives.h"
#include "collectives/reduce.h"
#include "model/ring_slices.h"
#include "tests/test_util.h"
#include "transport/inproc/inproc_transport.h"

namespace nshim::testing {

const std::vector<Collective> kAllCollectives = {
    Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter, Collective::kBroadcast,
    Collective::kReduce,    Collective::kAllToAll,  Collective::kGather,        Collective::kScatter};

const char* collectiveName(Collective collective) {
  static const char* kNames[] = {"allreduce", "allgather", "reducescatter", "broadcast",
                                 "reduce",    "alltoall",  "gather",        "scatter"};
  return kNames[static_cast<int>(collective)];
}
bool usesReduction(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}
bool usesRoot(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kGather ||
         c == Collective::kScatter;
}

namespace {

bool isUnsigned(DataType t) { return t == DataType::kUint8 || t == DataType::kUint32 || t == DataType::kUint64; }
bool isFp8(DataType t) { return t == DataType::kFp8E4M3 || t == DataType::kFp8E5M2; }

constexpr double kPreMulScalar = 2.0;

// Input element `index` of `rank`: small integers chosen so every partial result is exact.
double inputValue(const CollectiveCase& c, int rank, size_t index) {
  size_t mix = static_cast<size_t>(rank) * 7 + index * 13 + 3;
  if (c.reduce == ReduceKind::kProd && usesReduction(c.collective)) {
    if (isUnsigned(c.type)) return static_cast<double>(1 + mix % 2);
    static const double kSigned[3] = {-1, 1, 2};
    return kSigned[mix % 3];
  }
  if (c.reduce == ReduceKind::kAvg && usesReduction(c.collective) && isFloatType(c.type)) {
    mix = index * 13 + 3;  // equal on every rank, so the float average is exact
  }
  if (isFp8(c.type)) return static_cast<double>(static_cast<int>(mix % 3) - 1);
  if (isUnsigned(c.type)) return static_cast<double>(mix % 8);
  return static_cast<double>(static_cast<int>(mix % 8) - 3);
}

// Stores an exact value; integers wrap modulo 2^bits like the engine's integer arithmetic.
void storeExact(DataType type, void* buf, size_t index, double value) {
  if (isFloatType(type)) {
    storeFromDouble(type, buf, index, value);
    return;
  }
  int64_t wide = static_cast<int64_t>(value);
  size_t size = dataTypeSize(type);
  std::memcpy(static_cast<char*>(buf) + index * size, &wide, size);  // little-endian low bytes
}

double combine(ReduceKind kind, double a, double b) {
  switch (kind) {
    case ReduceKind::kProd: return a * b;
    case ReduceKind::kMax: return std::max(a, b);
    case ReduceKind::kMin: return std::min(a, b);
    default: return a + b;
  }
}

// The reduced value of input element `index` across all ranks.
double reducedValue(const CollectiveCase& c, int nranks, size_t index) {
  auto contribution = [&](int rank) {
    double v = inputValue(c, rank, index);
    return c.reduce == ReduceKind::kPreMulSum ? v * kPreMulScalar : v;
  };
  double acc = contribution(0);
  for (int rank = 1; rank < nranks; ++rank) acc = combine(c.reduce, acc, contribution(rank));
  if (c.reduce == ReduceKind::kAvg) {
    if (isFloatType(c.type)) return acc / nranks;
    return static_cast<double>(static_cast<int64_t>(acc) / nranks);  // integer division, truncating
  }
  return acc;
}

// inputValue() depends on the index only modulo kPeriod (mix is taken mod 2, 3 and 8), so inputs
// and references are built from tables of kPeriod elements: fast enough for multi-MB checks.
constexpr size_t kPeriod = 24;

class PatternTable {
 public:
  explicit PatternTable(DataType type) : size_(dataTypeSize(type)), bytes_(kPeriod * dataTypeSize(type)) {}
  char* slot(size_t index) { return bytes_.data() + (index % kPeriod) * size_; }
  // Writes elements [offset, offset + elems) of buf with pattern elements firstIndex, ...
  void fill(void* buf, size_t offset, size_t elems, size_t firstIndex) const {
    char* out = static_cast<char*>(buf) + offset * size_;
    for (size_t i = 0; i < elems; ++i)
      std::memcpy(out + i * size_, bytes_.data() + ((firstIndex + i) % kPeriod) * size_, size_);
  }

 private:
  size_t size_;
  std::vector<char> bytes_;
};

PatternTable inputTable(const CollectiveCase& c, int rank) {
  PatternTable table(c.type);
  for (size_t i = 0; i < kPeriod; ++i) storeExact(c.type, table.slot(i), 0, inputValue(c, rank, i));
  return table;
}

ReduceOp makeOp(const CollectiveCase& c) {
  ReduceOp op;
  op.kind = c.reduce;
  op.floatScalar = kPreMulScalar;
  op.intScalar = static_cast<int64_t>(kPreMulScalar);
  return op;
}

class Buffers {
 public:
  Buffers(DataType type, size_t sendElems, size_t recvElems)
      : size_(dataTypeSize(type)), send_(sendElems * size_ + 1, 0x5A), recv_(recvElems * size_ + 1, 0x5A) {}
  char* send() { return send_.data(); }
  char* recv() { return recv_.data(); }

 private:
  size_t size_;
  std::vector<char> send_;
  std::vector<char> recv_;
};

std::string compare(DataType type, const void* actual, const std::vector<char>& expected, size_t elems,
                    const std::string& what) {
  size_t size = dataTypeSize(type);
  for (size_t i = 0; i < elems; ++i) {
    if (std::memcmp(static_cast<const char*>(actual) + i * size, expected.data() + i * size, size) != 0) {
      return fmt::format("{}: element {} of {} is {} but should be {}", what, i, elems, loadAsDouble(type, actual, i),
                         loadAsDouble(type, expected.data(), i));
    }
  }
  return "";
}

}  // namespace

std::string runAndCheck(Communicator& comm, const CollectiveCase& c) {
  const int n = comm.nranks();
  const int r = comm.rank();
  const size_t size = dataTypeSize(c.type);
  const size_t count = c.count;
  const bool isRoot = r == c.root;
  std::string what = fmt::format("{} rank {}/{} count {} {} {} root {}{}", collectiveName(c.collective), r, n, count,
                                 dataTypeName(c.type), reduceKindName(c.reduce), c.root, c.inPlace ? " in-place" : "");
  std::vector<PatternTable> inputs;
  for (int p = 0; p < n; ++p) inputs.push_back(inputTable(c, p));
  auto fill = [&](void* buf, size_t offset, size_t elems, int rank, size_t firstIndex) {
    inputs[rank].fill(buf, offset, elems, firstIndex);
  };
  PatternTable reduced(c.type);
  if (usesReduction(c.collective)) {
    for (size_t i = 0; i < kPeriod; ++i) storeExact(c.type, reduced.slot(i), 0, reducedValue(c, n, i));
  }
  std::vector<char> expected;
  Status status;
  ReduceOp op = makeOp(c);
  switch (c.collective) {
    case Collective::kAllReduce:
    case Collective::kReduce: {
      Buffers b(c.type, count, count);
      fill(b.send(), 0, count, r, 0);
      char* recv = c.inPlace ? b.send() : b.recv();
      status = c.collective == Collective::kAllReduce ? allReduce(comm, b.send(), recv, count, c.type, op)
                                                      : reduce(comm, b.send(), recv, count, c.type, op, c.root);
      if (!status.ok()) return what + ": " + status.toString();
      if (c.collective == Collective::kReduce && !isRoot) return "";
      expected.resize(count * size);
      reduced.fill(expected.data(), 0, count, 0);
      return compare(c.type, recv, expected, count, what);
    }
    case Collective::kReduceScatter: {
      Buffers b(c.type, count * n, count);
      fill(b.send(), 0, count * n, r, 0);
      char* recv = c.inPlace ? b.send() + r * count * size : b.recv();
      status = reduceScatter(comm, b.send(), recv, count, c.type, op);
      if (!status.ok()) return what + ": " + status.toString();
      expected.resize(count * size);
      reduced.fill(expected.data(), 0, count, r * count);
      return compare(c.type, recv, expected, count, what);
    }
    case Collective::kAllGather:
    case Collective::kGather: {
      Buffers b(c.type, count, count * n);
      bool writesHere = c.collective == Collective::kAllGather || isRoot;
      char* send = (c.inPlace && writesHere) ? b.recv() + r * count * size : b.send();
      fill(send, 0, count, r, 0);
      status = c.collective == Collective::kAllGather ? allGather(comm, send, b.recv(), count, c.type)
                                                      : gather(comm, send, b.recv(), count, c.type, c.root);
      if (!status.ok()) return what + ": " + status.toString();
      if (!writesHere) return "";
      expected.resize(count * n * size);
      for (int p = 0; p < n; ++p) fill(expected.data(), p * count, count, p, 0);
      return compare(c.type, b.recv(), expected, count * n, what);
    }
    case Collective::kBroadcast: {
      Buffers b(c.type, count, count);
      char* recv = c.inPlace ? b.send() : b.recv();
      if (isRoot) fill(b.send(), 0, count, r, 0);
      status = broadcast(comm, b.send(), recv, count, c.type, c.root);
      if (!status.ok()) return what + ": " + status.toString();
      expected.resize(count * size);
      fill(expected.data(), 0, count, c.root, 0);
      return compare(c.type, recv, expected, count, what);
    }
    case Collective::kScatter: {
      Buffers b(c.type, count * n, count);
      if (isRoot) fill(b.send(), 0, count * n, r, 0);
      char* recv = (c.inPlace && isRoot) ? b.send() + r * count * size : b.recv();
      status = scatter(comm, b.send(), recv, count, c.type, c.root);
      if (!status.ok()) return what + ": " + status.toString();
      expected.resize(count * size);
      fill(expected.data(), 0, count, c.root, r * count);
      return compare(c.type, recv, expected, count, what);
    }
    case Collective::kAllToAll: {
      Buffers b(c.type, count * n, count * n);
      fill(b.send(), 0, count * n, r, 0);
      status = allToAll(comm, b.send(), b.recv(), count, c.type);
      if (!status.ok()) return what + ": " + status.toString();
      expected.resize(count * n * size);
      for (int p = 0; p < n; ++p) fill(expected.data(), p * count, count, p, r * count);
      return compare(c.type, b.recv(), expected, count * n, what);
    }
  }
  return "unknown collective";
}

std::vector<std::string> runCasesOnRanks(const std::vector<std::unique_ptr<Communicator>>& comms,
                                         const std::vector<CollectiveCase>& cases) {
  return runRanksInThreads(static_cast<int>(comms.size()), [&](int rank) -> std::string {
    for (const CollectiveCase& c : cases) {
      std::string error = runAndCheck(*comms[rank], c);
      if (!error.empty()) return error;
    }
    return "";
  });
}

uint64_t expectedSentBytes(const CollectiveCase& c, int rank, int n, size_t sliceBytes, int channels) {
  const uint64_t size = dataTypeSize(c.type);
  const uint64_t count = c.count;
  if (n == 1 || count == 0) return 0;
  switch (c.collective) {
    case Collective::kAllReduce: {
      // Per block (NCCL's Simple cut, model/ring_slices.h): every chunk but r+1 in the reduce-scatter
      // half, every chunk but r+2 in the allgather half.
      uint64_t total = 0;
      for (const RingLoopSlice& b : ncclSimpleAllReduceSlices(count, size, n, channels, sliceBytes)) {
        auto chunk = [&](int idx) {
          const size_t lo = std::min(b.base + static_cast<size_t>(idx) * b.stride + b.begin, b.end);
          return std::min(lo + b.elems, b.end) - lo;
        };
        uint64_t all = 0;
        for (int j = 0; j < n; ++j) all += chunk(j);
        total += 2 * all - chunk((rank + 1) % n) - chunk((rank + 2) % n);
      }
      return total * size;
    }
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAllToAll: return (n - 1) * count * size;
    case Collective::kBroadcast: return ((rank - c.root + n) % n) < n - 1 ? count * size : 0;
    case Collective::kReduce:
    case Collective::kGather: return rank == c.root ? 0 : count * size;
    case Collective::kScatter: return rank == c.root ? (n - 1) * count * size : 0;
  }
  return 0;
}

std::vector<std::unique_ptr<Communicator>> inProcessCommsOnNodes(const std::vector<int>& nodeKeyOfRank,
                                                                 const CollectiveOptions& options) {
  std::vector<std::unique_ptr<Communicator>> comms;
  for (auto& transport : createInProcessTransports(static_cast<int>(nodeKeyOfRank.size()))) {
    comms.push_back(std::make_unique<Communicator>(std::move(transport), options));
    comms.back()->setNodes(NodeLayout::fromKeys(nodeKeyOfRank));
  }
  return comms;
}

}  // namespace nshim::testing
