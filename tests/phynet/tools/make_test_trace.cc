// Writes a small ncclshim trace (FORMAT.md, one JSON Lines file per rank, through trace/'s line
// formatters) of a TP x DP job, for phynet's tests until the shim's recorder produces real ones:
// a world communicator (init), TP groups of consecutive ranks and DP groups strided by TP (splits),
// and per rank, repeated: allreduce / allgather / reducescatter / broadcast / alltoall / reduce /
// gather / scatter, a grouped send/recv ring on DP, a (nested) group of TP allreduces, a small
// allreduce and a send/recv between rank pairs. Half of the ops are marked GPU-timed.
//
// usage: phynet_make_test_trace <out dir> [--ranks N] [--tp T] [--repeat K] [--elements E]
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/main_fence.h"
#include "trace/trace_format.h"
#include "trace/trace_record.h"

namespace {

using namespace nshim::trace;

constexpr int32_t kInt8 = 0, kFloat32 = 7, kBfloat16 = 9;
constexpr int32_t kSum = 0, kMax = 2;

struct Comm {
  uint64_t id;
  int nranks;
  int rank;
  uint64_t seq = 0;
};

class RankWriter {
 public:
  RankWriter(FILE* file, int global) : file_(file), global_(global) {}

  void header() {
    TraceHeader h{};
    h.version = kTraceFormatVersion;
    h.abi = static_cast<int32_t>(kTraceRecordAbi);
    h.pid = 1000 + global_;
    h.ppid = 999;
    h.globalRank = global_;
    h.ringRecords = 4096;
    h.startRealtimeNs = 1'700'000'000'000'000'000;
    h.startMonotonicNs = clock_;
    copyFixed(h.host, sizeof(h.host), "testhost");
    emit(formatHeaderLine(h, line_, sizeof(line_)));
  }

  void comm(CommEvent event, const Comm& c, uint64_t parent, int32_t color, uint64_t splitSeq) {
    CommRecord r = makeCommRecord(event);
    r.commId = c.id;
    r.parentId = parent;
    r.color = color;
    r.key = global_;
    r.splitSeq = splitSeq;
    r.nranks = c.nranks;
    r.rank = c.rank;
    r.globalRank = global_;
    r.pid = 1000 + global_;
    r.timestampNs = clock_;
    copyFixed(r.host, sizeof(r.host), "testhost");
    ++comms_;
    emit(formatCommLine(r, n_++, line_, sizeof(line_)));
  }

  void group(bool start) {
    OpRecord r = makeOpRecord(start ? OpCode::kGroupStart : OpCode::kGroupEnd);
    if (start) ++depth_;
    r.groupDepth = depth_;
    if (!start) --depth_;
    r.hostStartNs = clock_;
    r.hostEndNs = clock_ + 200;
    clock_ += 500;
    emitOp(r);
  }

  void op(OpCode code, Comm& c, uint64_t count, int32_t dtype, int32_t redop = kNoRedOp, int32_t root = kNoRank,
          int32_t peer = kNoRank) {
    OpRecord r = makeOpRecord(code);
    r.commId = c.id;
    r.seq = c.seq++;
    r.count = count;
    r.datatype = dtype;
    r.redop = redop;
    r.root = root;
    r.peer = peer;
    r.rank = c.rank;
    r.nranks = c.nranks;
    r.bytes = traceBytes(code, count, dtype, c.nranks);
    r.groupDepth = depth_;
    r.hostStartNs = clock_;
    r.hostEndNs = clock_ + (depth_ ? 300 : 20'000 + static_cast<int64_t>(r.bytes / 2000));
    if (ops_ % 2 == 0) {  // GPU-timed: about 20 GB/s plus 15 us
      r.flags |= kOpFlagGpuTimed;
      r.gpuStartNs = r.hostStartNs + 3000;
      r.gpuEndNs = r.gpuStartNs + 15'000 + static_cast<int64_t>(r.bytes / 20);
    }
    clock_ = r.hostEndNs + (depth_ ? 100 : 150'000);  // compute between ops outside groups
    emitOp(r);
  }

  void footer() {
    TraceFooter f{};
    f.records = comms_ + ops_;
    f.comms = comms_;
    f.ops = ops_;
    f.globalRank = global_;
    f.endRealtimeNs = 1'700'000'000'000'000'000 + clock_;
    f.endMonotonicNs = clock_;
    copyFixed(f.reason, sizeof(f.reason), "close");
    emit(formatFooterLine(f, line_, sizeof(line_)));
  }

 private:
  void emitOp(const OpRecord& r) {
    ++ops_;
    emit(formatOpLine(r, n_++, line_, sizeof(line_)));
  }
  void emit(size_t length) {
    if (length == 0 || std::fwrite(line_, 1, length, file_) != length) {
      std::fprintf(stderr, "make_test_trace: write failed\n");
      std::exit(1);
    }
  }

  FILE* file_;
  int global_;
  int depth_ = 0;
  uint64_t n_ = 0, comms_ = 0, ops_ = 0;
  int64_t clock_ = 5'000'000'000;
  char line_[kFormatLineBytes];
};

int intArg(const char* text) {
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (*end != '\0' || v <= 0 || v > (1 << 26)) {
    std::fprintf(stderr, "make_test_trace: bad number '%s'\n", text);
    std::exit(2);
  }
  return static_cast<int>(v);
}

int run(int argc, char** argv) {
  const bool help = argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h");
  if (argc < 2 || help || argv[1][0] == '-' || argc % 2 != 0) {
    std::fprintf(help ? stdout : stderr,
                 "usage: %s <out dir> [--ranks N] [--tp T] [--repeat K] [--elements E]\n"
                 "Writes an ncclshim trace (rank<g>.jsonl per rank) of a TP x DP job using every op kind, for the\n"
                 "phynet tests. Defaults: 4 ranks, tp 2, 1 repeat, 16384 elements.\n",
                 argv[0]);
    return help ? 0 : 2;
  }
  const std::string dir = argv[1];
  int world = 4, tp = 2, repeat = 1, elements = 16384;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    int value = intArg(argv[i + 1]);
    if (name == "--ranks") world = value;
    else if (name == "--tp") tp = value;
    else if (name == "--repeat") repeat = value;
    else if (name == "--elements") elements = value;
    else {
      std::fprintf(stderr, "make_test_trace: unknown option %s\n", name.c_str());
      return 2;
    }
  }
  if (world % tp != 0 || world / tp < 2 || tp < 2 || world % 2 != 0) {
    std::fprintf(stderr, "make_test_trace: need tp >= 2, ranks = tp * dp with dp >= 2, and an even number of ranks\n");
    return 2;
  }
  const int dp = world / tp;
  ::mkdir(dir.c_str(), 0755);
  const char worldIdBytes[16] = "phynet-test-job";
  const uint64_t worldId = commIdFromUniqueId(worldIdBytes, sizeof(worldIdBytes));
  const uint64_t e = static_cast<uint64_t>(elements);
  for (int g = 0; g < world; ++g) {
    std::string path = dir + "/rank" + std::to_string(g) + ".jsonl";
    nshim::setFenceActivity("writing " + path);
    FILE* file = std::fopen(path.c_str(), "w");
    if (!file) {
      std::perror(path.c_str());
      return 1;
    }
    RankWriter w(file, g);
    Comm all{worldId, world, g};
    Comm tpComm{commIdForSplit(worldId, g / tp, 0), tp, g % tp};
    Comm dpComm{commIdForSplit(worldId, tp + g % tp, 1), dp, g / tp};
    w.header();
    w.comm(CommEvent::kInit, all, 0, 0, 0);
    w.comm(CommEvent::kSplit, tpComm, worldId, g / tp, 0);
    w.comm(CommEvent::kSplit, dpComm, worldId, tp + g % tp, 1);
    for (int k = 0; k < repeat; ++k) {
      w.op(OpCode::kAllReduce, all, e * world, kFloat32, kSum);
      w.op(OpCode::kAllGather, tpComm, e, kBfloat16);
      w.op(OpCode::kReduceScatter, tpComm, e, kFloat32, kSum);
      w.op(OpCode::kAllReduce, dpComm, 2 * e * dp, kFloat32, kSum);
      w.op(OpCode::kBroadcast, all, e, kFloat32, kNoRedOp, 0);
      w.op(OpCode::kAlltoAll, all, e / 4, kFloat32);
      w.group(true);  // pipeline-style ring on DP: send to the next, receive from the previous
      w.op(OpCode::kSend, dpComm, e, kFloat32, kNoRedOp, kNoRank, (dpComm.rank + 1) % dp);
      w.op(OpCode::kRecv, dpComm, e, kFloat32, kNoRedOp, kNoRank, (dpComm.rank + dp - 1) % dp);
      w.group(false);
      w.group(true);  // coalesced TP allreduces, one nested group
      w.op(OpCode::kAllReduce, tpComm, e, kFloat32, kSum);
      w.group(true);
      w.op(OpCode::kAllReduce, tpComm, e / 2, kBfloat16, kSum);
      w.group(false);
      w.group(false);
      w.op(OpCode::kReduce, all, e * world, kFloat32, kMax, 1);
      w.op(OpCode::kAllGather, all, e, kInt8);
      w.op(OpCode::kAllReduce, all, 1024, kFloat32, kSum);  // small: recursive doubling on 2^k ranks
      w.op(OpCode::kGather, all, e / 8, kFloat32, kNoRedOp, 0);
      w.op(OpCode::kScatter, all, e / 8, kFloat32, kNoRedOp, world - 1);
      if (g % 2 == 0) w.op(OpCode::kSend, all, e, kFloat32, kNoRedOp, kNoRank, g + 1);
      else w.op(OpCode::kRecv, all, e, kFloat32, kNoRedOp, kNoRank, g - 1);
    }
    w.footer();
    if (std::fclose(file) != 0) {
      std::perror(path.c_str());
      return 1;
    }
  }
  std::printf("wrote %d rank files to %s (tp %d, dp %d, %d repeat(s))\n", world, dir.c_str(), tp, dp, repeat);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return nshim::runFenced("phynet_make_test_trace", [&] { return run(argc, argv); });
}
