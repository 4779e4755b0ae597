// NCCL's network proxy steps, timed (profiler_step_log.h): a preallocated log written by NCCL's proxy
// thread (one writer per entry: the thread that progresses its operation), read once at the last
// finalize, when no proxy operation is in flight.
#include "libshim/profiler_step_log.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "common/log.h"
#include "common/private_file.h"
#include "common/settings.h"
#include "libshim/nccl_profiler_abi.h"

namespace nshim::profiler {
namespace {

namespace abi = ::nshim::profiler_abi;

// The times of a step, by NCCL's state: [0] the step's start, [1..3] the states below, [4] its stop.
struct StepEntry {
  StepOwner owner;
  int32_t step = 0;
  uint64_t bytes = 0;
  uint64_t t[5] = {};
};

// send: GPU wait, data ready (isend tried), isend posted; receive: irecv posted, arrived, to the GPU.
int timeSlot(bool isSend, int state) {
  if (isSend) {
    switch (state) {
      case abi::kStateProxyStepSendGpuWait: return 1;
      case abi::kStateProxyStepSendPeerWait: return 2;
      case abi::kStateProxyStepSendWait: return 3;
      default: return -1;
    }
  }
  switch (state) {
    case abi::kStateProxyStepRecvWait: return 1;
    case abi::kStateProxyStepRecvFlushWait: return 2;
    case abi::kStateProxyStepRecvGpuWait: return 3;
    default: return -1;
  }
}

constexpr uint64_t kCapacity = uint64_t{1} << 21;  // entries (160 MiB of address space, touched as used)

struct StepLog {
  std::string folder;
  StepEntry* entries = nullptr;  // kCapacity of them, mapped at set-up
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> dropped{0};
  std::atomic<int> liveComms{0};
  std::atomic<bool> written{false};
};

StepLog gLog;
bool gOn = false;  // set once by stepLogSetUp, before any event

void writeLog() {
  if (gLog.written.exchange(true)) return;
  const uint64_t used = std::min(gLog.next.load(), kCapacity);
  if (::mkdir(gLog.folder.c_str(), 0700) != 0 && errno != EEXIST) {
    NS_WARN("NCCLSHIM_PROFILER_STEPS: cannot create {}: {}", gLog.folder, std::strerror(errno));
    return;
  }
  const std::string path = gLog.folder + "/ncclshim-steps-" + std::to_string(::getpid()) + ".csv";
  char chosen[4096];
  const int fd = createNewFile(path.c_str(), 0600, chosen, sizeof(chosen));
  if (fd < 0) {
    NS_WARN("NCCLSHIM_PROFILER_STEPS: cannot create {}: {} ({} steps not written)", path, std::strerror(-fd), used);
    return;
  }
  FILE* out = ::fdopen(fd, "w");
  if (out == nullptr) {
    ::close(fd);
    return;
  }
  std::fprintf(out,
               "# ncclshim proxy steps, pid %d, %llu steps, %llu not kept (log full)\n"
               "# send: t1 GPU wait, t2 data ready (isend tried), t3 isend posted, stop done; "
               "recv: t1 irecv posted, t2 arrived, t3 handed to the GPU, stop consumed\n"
               "nccl_comm,comm,seq,rank,peer,channel,dir,step,bytes,start_ns,t1_ns,t2_ns,t3_ns,stop_ns\n",
               static_cast<int>(::getpid()), static_cast<unsigned long long>(used),
               static_cast<unsigned long long>(gLog.dropped.load()));
  for (uint64_t i = 0; i < used; ++i) {
    const StepEntry& e = gLog.entries[i];
    std::fprintf(out, "%#llx,%llu,%llu,%d,%d,%d,%s,%d,%llu,%llu,%llu,%llu,%llu,%llu\n",
                 static_cast<unsigned long long>(e.owner.ncclCommHash), static_cast<unsigned long long>(e.owner.commId),
                 static_cast<unsigned long long>(e.owner.seq), e.owner.rank, e.owner.peer, e.owner.channel,
                 e.owner.isSend ? "send" : "recv", e.step, static_cast<unsigned long long>(e.bytes),
                 static_cast<unsigned long long>(e.t[0]), static_cast<unsigned long long>(e.t[1]),
                 static_cast<unsigned long long>(e.t[2]), static_cast<unsigned long long>(e.t[3]),
                 static_cast<unsigned long long>(e.t[4]));
  }
  if (std::fclose(out) != 0) {
    NS_WARN("NCCLSHIM_PROFILER_STEPS: writing {} failed: {}", chosen, std::strerror(errno));
    return;
  }
  NS_INFO("NCCLSHIM_PROFILER_STEPS: {} proxy steps written to {}", used, chosen);
}

}  // namespace

bool stepLogOn() { return gOn; }

void stepLogSetUp() {
  gLog.folder = settingString(Setting::NCCLSHIM_PROFILER_STEPS);
  if (gLog.folder.empty()) return;
  void* memory = ::mmap(nullptr, kCapacity * sizeof(StepEntry), PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (memory == MAP_FAILED) {
    NS_WARN("NCCLSHIM_PROFILER_STEPS: no memory for the step log ({}): steps not timed", std::strerror(errno));
    return;
  }
  gLog.entries = static_cast<StepEntry*>(memory);
  gOn = true;
}

uint64_t stepLogStart(const StepOwner& owner, int step, uint64_t nowNs) {
  const uint64_t ticket = gLog.next.fetch_add(1, std::memory_order_relaxed);
  if (ticket >= kCapacity) {
    gLog.dropped.fetch_add(1, std::memory_order_relaxed);
    return UINT64_MAX;
  }
  StepEntry& e = gLog.entries[ticket];
  e.owner = owner;
  e.step = step;
  e.t[0] = nowNs;
  return ticket;
}

bool stepLogOwnerTicket(uint64_t ticket, uint64_t* proxyTicket) {
  if (ticket >= kCapacity || ticket >= gLog.next.load(std::memory_order_relaxed)) return false;
  *proxyTicket = gLog.entries[ticket].owner.proxyTicket;
  return true;
}

void stepLogState(uint64_t ticket, int state, uint64_t bytes, uint64_t nowNs) {
  if (ticket >= kCapacity) return;
  StepEntry& e = gLog.entries[ticket];
  const int slot = timeSlot(e.owner.isSend, state);
  if (slot < 0 || e.t[slot] != 0) return;
  e.t[slot] = nowNs;
  // NCCL passes the step's size with these two; with the others, whatever it passed last.
  if (state == abi::kStateProxyStepSendWait || state == abi::kStateProxyStepRecvFlushWait) e.bytes = bytes;
}

void stepLogStop(uint64_t ticket, uint64_t nowNs) {
  if (ticket < kCapacity) gLog.entries[ticket].t[4] = nowNs;
}

void stepLogCommOpened() {
  if (gOn) gLog.liveComms.fetch_add(1);
}

void stepLogCommClosed() {
  if (gOn && gLog.liveComms.fetch_sub(1) == 1) writeLog();
}

}  // namespace nshim::profiler
