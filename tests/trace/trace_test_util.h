// Helpers of the trace tests: a temporary directory removed with its files, varied records that
// exercise every field, and forked children with a deadline.
#pragma once

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "trace/trace_format.h"
#include "trace/trace_record.h"

namespace nshim::trace::testing {

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/ncclshim-trace-test-XXXXXX";
    path_ = mkdtemp(pattern) ? pattern : "/tmp";
  }
  ~TempDir() {
    for (const std::string& f : files()) unlink(f.c_str());
    rmdir(path_.c_str());
  }
  const std::string& path() const { return path_; }
  // Full paths of the directory's entries, sorted.
  std::vector<std::string> files() const {
    std::vector<std::string> out;
    if (DIR* d = opendir(path_.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") out.push_back(path_ + "/" + name);
      }
      closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

// Record `i` of thread `thread`: every field set, cycling through ops, types and redops
// (including PreMulSum, "none" and negative values where the schema allows them).
inline OpRecord variedOp(int thread, uint64_t i) {
  OpRecord r = makeOpRecord(static_cast<OpCode>(i % kNumOpCodes));
  r.commId = 0xabc0000000000000ull | uint64_t(thread);
  r.rank = thread % 4;
  r.nranks = 4;
  r.seq = i;
  r.count = i * 7 + 1;
  r.datatype = i % 29 == 0 ? kNoDatatype : int32_t(i % kNumDatatypes);
  r.redop = i % 23 == 0 ? kNoRedOp : int32_t(i % kNumBuiltinRedOps);
  if (i % 17 == 0) {
    r.redop = int32_t(5 + i % 3);
    r.flags |= kOpFlagPreMulSum;
  }
  r.root = i % 3 == 0 ? kNoRank : int32_t(i % 4);
  r.peer = i % 5 == 0 ? kNoRank : int32_t((i + 1) % 4);
  r.bytes = traceBytes(r.op, r.count, r.datatype, r.nranks);
  r.stream = 0x7f00000000000000ull + i;
  r.groupDepth = int32_t(i % 3);
  r.hostStartNs = 1'000'000'000'000 + int64_t(i) * 1000;
  r.hostEndNs = r.hostStartNs + 500;
  if (i % 2) {
    r.flags |= kOpFlagGpuTimed;
    r.gpuStartNs = r.hostStartNs + 10;
    r.gpuEndNs = r.hostStartNs + 9000;
  }
  if (i % 11 == 0) r.flags |= kOpFlagGraphCaptured;
  if (i % 13 == 0) {
    r.flags |= kOpFlagError;
    r.result = 2;
  }
  return r;
}

inline CommRecord variedComm(uint64_t commId, int rank, int nranks, CommEvent event) {
  CommRecord r = makeCommRecord(event);
  r.commId = commId;
  r.nranks = nranks;
  r.rank = rank;
  r.globalRank = rank;
  r.pid = 4242;
  r.cudaDevice = rank % 2;
  r.timestampNs = 123456789;
  copyFixed(r.host, sizeof(r.host), "node-\"a\"\\b");
  if (event == CommEvent::kSplit) {
    r.parentId = 0x1111;
    r.color = -7;
    r.key = rank;
    r.splitSeq = 3;
  }
  return r;
}

// Forks a child running `body` (its return value is the exit code). Flushes stdio first.
inline pid_t forkChild(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int code = 99;
    try {
      code = body();
    } catch (...) {}
    std::fflush(nullptr);
    _exit(code);
  }
  return pid;
}

// waitpid with a deadline: the raw status, or -1 after killing a child that ran too long.
inline int waitChild(pid_t pid, double timeoutSeconds) {
  Deadline deadline = Deadline::after(timeoutSeconds);
  while (!deadline.expired()) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return status;
    usleep(1000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

}  // namespace nshim::trace::testing
