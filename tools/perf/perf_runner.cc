// The timing and checking loop of `ncclshim perf`, and the nccl-tests-format table it prints.
#include "tools/perf/perf_runner.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <vector>

#include "collectives/reduce.h"
#include "model/datatype.h"
#include "tools/perf/perf_collectives.h"

namespace nshim::perf {
namespace {

struct TypeInfo {
  ncclDataType_t nccl;
  DataType engine;
};

bool lookupType(const std::string& name, TypeInfo* out) {
  static const std::map<std::string, TypeInfo> kTypes = {
      {"int8", {ncclInt8, DataType::kInt8}},         {"uint8", {ncclUint8, DataType::kUint8}},
      {"int32", {ncclInt32, DataType::kInt32}},      {"uint32", {ncclUint32, DataType::kUint32}},
      {"int64", {ncclInt64, DataType::kInt64}},      {"uint64", {ncclUint64, DataType::kUint64}},
      {"half", {ncclFloat16, DataType::kFloat16}},   {"float", {ncclFloat32, DataType::kFloat32}},
      {"double", {ncclFloat64, DataType::kFloat64}}, {"bfloat16", {ncclBfloat16, DataType::kBfloat16}}};
  auto it = kTypes.find(name);
  if (it == kTypes.end()) return false;
  *out = it->second;
  return true;
}

bool lookupOp(const std::string& name, ncclRedOp_t* out) {
  static const std::map<std::string, ncclRedOp_t> kOps = {
      {"sum", ncclSum}, {"prod", ncclProd}, {"max", ncclMax}, {"min", ncclMin}, {"avg", ncclAvg}};
  auto it = kOps.find(name);
  if (it == kOps.end()) return false;
  *out = it->second;
  return true;
}

double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

struct Measurement {
  double timeUs = 0;
  double algbw = 0;
  double busbw = 0;
  long long wrong = 0;
  bool skipped = false;
};

class RankBench {
 public:
  RankBench(const PerfOptions& o, const PerfCollective& c, TypeInfo type, ncclRedOp_t op, ncclComm_t comm, int rank,
            int nranks)
      : o_(o), c_(c), type_(type), op_(op), comm_(comm), rank_(rank), n_(nranks), elemSize_(dataTypeSize(type.engine)) {
  }

  // Runs one size in one placement. Returns false on an NCCL error (message in error_).
  bool measure(size_t totalElems, bool inPlace, Measurement* m) {
    if (inPlace && !c_.collective.inPlace) {
      m->skipped = true;
      return true;
    }
    const CollectiveShape shape = shapeOfTotal(c_.collective, totalElems, n_);
    const size_t sendElems = shape.sendElems, recvElems = shape.recvElems, count = shape.count;
    send_.assign(sendElems * elemSize_ + 64, 0);
    recv_.assign(recvElems * elemSize_ + 64, 0);
    char* send = send_.data();
    char* recv = recv_.data();
    if (inPlace) placeInPlace(count, &send, &recv);
    fillInput(send, sendElems);
    for (int i = 0; i < o_.warmupIters; ++i) {
      if (!call(send, recv, count)) return false;
    }
    if (!barrier()) return false;
    double start = seconds();
    for (int i = 0; i < o_.iters; ++i) {
      if (!call(send, recv, count)) return false;
    }
    double elapsed = (seconds() - start) / o_.iters;
    if (!reduceDouble(&elapsed, ncclMax)) return false;
    double bytes = static_cast<double>(totalElems * elemSize_);
    m->timeUs = elapsed * 1e6;
    m->algbw = elapsed > 0 ? bytes / elapsed / 1e9 : 0;
    m->busbw = m->algbw * busBandwidthFactor(c_.collective, n_);
    if (o_.check) {
      fillInput(send, sendElems);
      if (!call(send, recv, count)) return false;
      double wrong = static_cast<double>(countWrong(recv, recvElems, totalElems));
      if (!reduceDouble(&wrong, ncclSum)) return false;
      m->wrong = static_cast<long long>(wrong);
    }
    return true;
  }

  const std::string& error() const { return error_; }

 private:
  // nccl-tests' in-place buffers: the one-block side is this rank's block of the per-rank side
  // (allgather's input, reducescatter's output), else both are the same buffer.
  void placeInPlace(size_t count, char** send, char** recv) {
    const Blocks sendBlocks = c_.collective.sendBlocks, recvBlocks = c_.collective.recvBlocks;
    if (sendBlocks == Blocks::kOne && recvBlocks == Blocks::kPerRank) *send = *recv + rank_ * count * elemSize_;
    else if (sendBlocks == Blocks::kPerRank && recvBlocks == Blocks::kOne) *recv = *send + rank_ * count * elemSize_;
    else *recv = *send;
  }

  void fillInput(char* send, size_t elems) {
    bool product = o_.redOp == "prod";
    for (size_t i = 0; i < elems; ++i) storeFromDouble(type_.engine, send, i, perfInputValue(rank_, i, product));
  }

  long long countWrong(const char* recv, size_t recvElems, size_t total) {
    long long wrong = 0;
    bool exact = !(type_.engine == DataType::kFloat16 || type_.engine == DataType::kBfloat16 ||
                   (o_.redOp == "avg" && isFloatType(type_.engine)));
    for (size_t i = 0; i < recvElems; ++i) {
      bool defined = true;
      double expected = perfExpectedValue(c_, o_.redOp, type_.nccl, n_, rank_, o_.root, total, i, &defined);
      if (!defined) return 0;
      double actual = loadAsDouble(type_.engine, recv, i);
      if (exact ? actual != expected : std::fabs(actual - expected) > 1e-2 * std::fabs(expected) + 1e-3) ++wrong;
    }
    return wrong;
  }

  bool call(const void* send, void* recv, size_t count) {
    ncclResult_t result = c_.run(send, recv, count, type_.nccl, op_, o_.root, comm_);
    if (result != ncclSuccess) {
      error_ = fmt::format("{} failed: {} ({})", c_.name(), ncclGetErrorString(result), ncclGetLastError(comm_));
      return false;
    }
    return true;
  }

  bool reduceDouble(double* value, ncclRedOp_t op) {
    double in = *value;
    ncclResult_t result = ncclAllReduce(&in, value, 1, ncclFloat64, op, comm_, nullptr);
    if (result != ncclSuccess) {
      error_ = fmt::format("allreduce of results failed: {} ({})", ncclGetErrorString(result), ncclGetLastError(comm_));
      return false;
    }
    return true;
  }

  bool barrier() {
    double token = 0;
    return reduceDouble(&token, ncclSum);
  }

  const PerfOptions& o_;
  const PerfCollective& c_;
  TypeInfo type_;
  ncclRedOp_t op_;
  ncclComm_t comm_;
  int rank_;
  int n_;
  size_t elemSize_;
  std::vector<char> send_;
  std::vector<char> recv_;
  std::string error_;
};

std::string formatColumns(const Measurement& m) {
  if (m.skipped) return fmt::format("  {:>8}  {:>6}  {:>6}  {:>6}", "N/A", "N/A", "N/A", "N/A");
  return fmt::format("  {:8.2f}  {:6.2f}  {:6.2f}  {:6}", m.timeUs, m.algbw, m.busbw, m.wrong);
}

void printHeader(const PerfOptions& o, const PerfCollective& c, int nranks) {
  std::printf("# ncclshim perf: %s, %d ranks, %s, op %s, warmup %d, iters %d, check %d\n", c.name(), nranks,
              o.dataType.c_str(), o.redOp.c_str(), o.warmupIters, o.iters, o.check);
  std::printf("#\n");
  std::string extra = o.linkGBps > 0 ? "   ideal   busbw" : "";
  std::string extra2 = o.linkGBps > 0 ? "   busbw  effic." : "";
  std::string extra3 = o.linkGBps > 0 ? "  (GB/s)     (%)" : "";
  std::printf("#%78s%40s%s\n", "out-of-place", "in-place", extra.c_str());
  std::printf("#%11s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s%s\n", "size", "count", "type",
              "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong", extra2.c_str());
  std::printf("#%11s  %12s  %8s  %6s  %6s  %8s  %6s  %6s  %6s  %8s  %6s  %6s  %6s%s\n", "(B)", "(elements)", "", "", "",
              "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", extra3.c_str());
}

}  // namespace

int runPerfRank(const PerfOptions& o, const ncclUniqueId& id, int rank, int nranks) {
  const PerfCollective* c = findPerfCollective(o.op);
  TypeInfo type;
  ncclRedOp_t op;
  if (!c || !lookupType(o.dataType, &type) || !lookupOp(o.redOp, &op)) {
    std::fprintf(stderr, "ncclshim perf: unknown op, type '%s' or reduction '%s'\n", o.dataType.c_str(),
                 o.redOp.c_str());
    return 2;
  }
  ncclComm_t comm = nullptr;
  ncclResult_t result = ncclCommInitRank(&comm, nranks, id, rank);
  if (result != ncclSuccess) {
    std::fprintf(stderr, "ncclshim perf: rank %d: ncclCommInitRank failed: %s (%s)\n", rank, ncclGetErrorString(result),
                 ncclGetLastError(nullptr));
    return 1;
  }
  FILE* csv = (rank == 0 && !o.csvPath.empty()) ? std::fopen(o.csvPath.c_str(), "w") : nullptr;
  if (csv)
    std::fprintf(
        csv, "op,nranks,size,count,type,redop,root,time_us,algbw,busbw,wrong,ip_time_us,ip_algbw,ip_busbw,ip_wrong\n");
  if (rank == 0) printHeader(o, *c, nranks);
  RankBench bench(o, *c, type, op, comm, rank, nranks);
  const size_t elemSize = dataTypeSize(type.engine);
  const size_t granularity = elemSize * sizeBlocks(c->collective, nranks);  // whole blocks for every rank
  double busSum = 0;
  int rows = 0;
  long long wrongTotal = 0;
  int exitCode = 0;
  for (size_t size = o.minBytes; size <= o.maxBytes;) {
    size_t bytes = std::max(granularity, size / granularity * granularity);
    size_t total = bytes / elemSize;
    Measurement outOfPlace, inPlace;
    if (!bench.measure(total, false, &outOfPlace) || !bench.measure(total, true, &inPlace)) {
      std::fprintf(stderr, "ncclshim perf: rank %d: %s\n", rank, bench.error().c_str());
      exitCode = 1;
      break;
    }
    wrongTotal += outOfPlace.wrong + inPlace.wrong;
    busSum += outOfPlace.busbw;
    ++rows;
    if (rank == 0) {
      int root = c->collective.rooted ? o.root : -1;
      const size_t ncclCount = shapeOfTotal(c->collective, total, nranks).count;  // nccl-tests prints the call's count
      std::string line = fmt::format("{:12}  {:12}  {:>8}  {:>6}  {:6}", bytes, ncclCount, o.dataType,
                                     c->collective.reduces ? o.redOp : "none", root) +
                         formatColumns(outOfPlace) + formatColumns(inPlace);
      if (o.linkGBps > 0) line += fmt::format("  {:6.2f}  {:6.1f}", o.linkGBps, 100.0 * outOfPlace.busbw / o.linkGBps);
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
      if (csv) {
        std::fprintf(csv, "%s,%d,%zu,%zu,%s,%s,%d,%.3f,%.4f,%.4f,%lld,%.3f,%.4f,%.4f,%lld\n", c->name(), nranks, bytes,
                     ncclCount, o.dataType.c_str(), o.redOp.c_str(), root, outOfPlace.timeUs, outOfPlace.algbw,
                     outOfPlace.busbw, outOfPlace.wrong, inPlace.timeUs, inPlace.algbw, inPlace.busbw, inPlace.wrong);
      }
    }
    size_t next = o.stepBytes ? size + o.stepBytes : static_cast<size_t>(std::ceil(size * o.stepFactor));
    if (next <= size) break;
    size = next;
  }
  if (csv) std::fclose(csv);
  if (rank == 0 && exitCode == 0) {
    std::printf("# Out of bounds values : %lld %s\n", wrongTotal, wrongTotal == 0 ? "OK" : "FAILED");
    std::printf("# Avg bus bandwidth    : %.4f\n", rows ? busSum / rows : 0.0);
    std::printf("#\n");
  }
  if (wrongTotal != 0) exitCode = 1;
  ncclCommDestroy(comm);
  return exitCode;
}

}  // namespace nshim::perf
