// The profiler side of the fake NCCL: it loads the plugin named by NCCL_PROFILER_PLUGIN (symbol
// ncclProfiler_v5) and raises the events NCCL 2.28 raises, in its order and on its threads, so that
// the shim's plugin is driven as in a real job (tests/suites/profiler_tests.sh checks the trace):
//   - init per communicator (commHash, nNodes = nranks, nranks, rank), finalize at destroy;
//   - inside each API call on the caller's thread: a CollApi / P2pApi event, stopped before return;
//   - at launch (the call's return, or ncclGroupEnd): a Coll / P2p task event whose parent is that
//     API event (algo / proto from FAKE_NCCL_ALGO / FAKE_NCCL_PROTO, default RING / SIMPLE, 2
//     channels, 8 warps, NCCL's seqNumber per communicator and function);
//   - on a separate "proxy" thread: per channel, ProxyOp events (coll: send to rank+1 and receive
//     from rank-1; send / recv: one to / from the peer) with 3 steps each; every step raises states
//     that carry no size (GPU wait, peer wait with a stale size) and one that does (SendWait /
//     RecvFlushWait: fakeprof::stepBytes); the task was stopped before, on the caller's thread,
//     as NCCL stops it at the end of the launch.
// The checker (profiler_trace_check.cc) recomputes every value from the same rules.
#include "fake_nccl_profiler.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../libshim/nccl_profiler_abi.h"
#include "fake_profiler_rules.h"

namespace {

namespace abi = nshim::profiler_abi;

struct CommProfile {
  void* context = nullptr;
  int mask = 0;  // the activation mask the plugin returned: NCCL raises only those events
  int nranks = 0;
  int rank = 0;
  std::map<std::string, uint64_t> seqNumber;  // per function, as NCCL's comm->seqNumber[func]
};

struct Pending {
  void* comm;
  bool coll;
  std::string func;
  size_t count;
  int datatype;
  int root;
  void* apiHandle;
};

std::mutex gMutex;
std::map<void*, CommProfile> gComms;
thread_local int tGroupDepth = 0;
thread_local std::vector<Pending> tPending;

abi::ProfilerV5* loadPlugin() {
  const char* name = std::getenv("NCCL_PROFILER_PLUGIN");
  if (name == nullptr || name[0] == '\0') return nullptr;
  abi::ProfilerV5* found = nullptr;
  void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) found = static_cast<abi::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
  if (found == nullptr) std::fprintf(stderr, "fake NCCL: no ncclProfiler_v5 in %s\n", name);
  return found;
}

// Loaded once, at the first hook (NCCL loads it at the first communicator).
abi::ProfilerV5* plugin() {
  static abi::ProfilerV5* const loaded = loadPlugin();
  return loaded;
}

const char* envOr(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && value[0] != '\0' ? value : fallback;
}

const char* datatypeName(int datatype) {
  static const char* kNames[] = {"ncclInt8",    "Unknown",      "ncclInt32",      "ncclUint32",
                                 "ncclInt64",   "ncclUint64",   "ncclFloat16",    "ncclFloat32",
                                 "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  return datatype >= 0 && datatype < 12 ? kNames[datatype] : "Unknown";  // NCCL's table lacks uint8 too
}

// The proxy operations of one task, on the proxy thread.
void runProxy(abi::ProfilerV5* p, const CommProfile& comm, const Pending& task, void* taskHandle) {
  if (!(comm.mask & abi::kEventProxyOp)) return;
  std::vector<std::pair<int, int>> ops;  // (isSend, peer)
  if (task.coll) {
    ops.push_back({1, (comm.rank + 1) % comm.nranks});
    ops.push_back({0, (comm.rank + comm.nranks - 1) % comm.nranks});
  } else {
    ops.push_back({task.func == "Send" ? 1 : 0, task.root});
  }
  for (int channel = 0; channel < fakeprof::kChannels; ++channel) {
    for (auto [isSend, peer] : ops) {
      abi::EventDescrV5 d{};
      d.type = abi::kEventProxyOp;
      d.parentObj = taskHandle;
      d.rank = comm.rank;
      d.proxyOp.pid = getpid();
      d.proxyOp.channelId = static_cast<uint8_t>(channel);
      d.proxyOp.peer = peer;
      d.proxyOp.nSteps = fakeprof::kSteps;
      d.proxyOp.chunkSize = fakeprof::kChunkSize;
      d.proxyOp.isSend = isSend;
      void* op = nullptr;
      p->startEvent(comm.context, &op, &d);
      if (!(comm.mask & abi::kEventProxyStep)) {
        p->stopEvent(op);
        continue;
      }
      p->recordEventState(op, abi::kStateProxyOpInProgress, nullptr);
      for (int step = 0; step < fakeprof::kSteps; ++step) {
        abi::EventDescrV5 s{};
        s.type = abi::kEventProxyStep;
        s.parentObj = op;
        s.rank = comm.rank;
        s.proxyStep.step = step;
        void* stepHandle = nullptr;
        p->startEvent(comm.context, &stepHandle, &s);
        abi::EventStateArgsV5 stale{};
        stale.proxyStep.transSize = 999999;  // NCCL passes the previous step's size with other states
        p->recordEventState(stepHandle, isSend ? abi::kStateProxyStepSendGpuWait : abi::kStateProxyStepRecvWait,
                            &stale);
        abi::EventStateArgsV5 sized{};
        sized.proxyStep.transSize = fakeprof::stepBytes(channel, step, isSend);
        p->recordEventState(stepHandle, isSend ? abi::kStateProxyStepSendWait : abi::kStateProxyStepRecvFlushWait,
                            &sized);
        p->recordEventState(stepHandle, isSend ? abi::kStateProxyStepSendPeerWait : abi::kStateProxyStepRecvGpuWait,
                            &stale);
        p->stopEvent(stepHandle);
      }
      p->stopEvent(op);
    }
  }
}

void launch(std::vector<Pending>& tasks) {
  abi::ProfilerV5* p = plugin();
  if (p == nullptr) return;
  const char* algo = envOr("FAKE_NCCL_ALGO", "RING");
  const char* proto = envOr("FAKE_NCCL_PROTO", "SIMPLE");
  for (const Pending& task : tasks) {
    CommProfile comm;
    uint64_t seqNumber = 0;
    {
      std::lock_guard<std::mutex> lock(gMutex);
      auto it = gComms.find(task.comm);
      if (it == gComms.end() || it->second.context == nullptr) continue;
      if (task.coll) seqNumber = it->second.seqNumber[task.func]++;
      comm.context = it->second.context;
      comm.mask = it->second.mask;
      comm.nranks = it->second.nranks;
      comm.rank = it->second.rank;
    }
    abi::EventDescrV5 d{};
    d.type = task.coll ? abi::kEventColl : abi::kEventP2p;
    d.parentObj = task.apiHandle;
    d.rank = comm.rank;
    if (task.coll) {
      d.coll.seqNumber = seqNumber;
      d.coll.func = task.func.c_str();
      d.coll.count = task.count;
      d.coll.root = task.root;
      d.coll.datatype = datatypeName(task.datatype);
      d.coll.nChannels = fakeprof::kChannels;
      d.coll.nWarps = fakeprof::kWarps;
      d.coll.algo = algo;
      d.coll.proto = proto;
    } else {
      d.p2p.func = task.func.c_str();
      d.p2p.datatype = datatypeName(task.datatype);
      d.p2p.count = task.count;
      d.p2p.peer = task.root;
      d.p2p.nChannels = fakeprof::kChannels;
    }
    if (!(comm.mask & (task.coll ? abi::kEventColl : abi::kEventP2p))) continue;
    void* taskHandle = nullptr;
    p->startEvent(comm.context, &taskHandle, &d);
    // NCCL stops the task when the launch is done, before its proxy thread starts the task's
    // operations, which still name the stopped task as their parent.
    p->stopEvent(taskHandle);
    std::thread proxy(runProxy, p, comm, task, taskHandle);
    proxy.join();
  }
  tasks.clear();
}

}  // namespace

extern "C" void fakeProfilerCommInit(void* comm, uint64_t commHash, int nranks, int rank) {
  abi::ProfilerV5* p = plugin();
  if (p == nullptr) return;
  CommProfile profile;
  profile.nranks = nranks;
  profile.rank = rank;
  if (p->init(&profile.context, commHash, &profile.mask, "fake", nranks, nranks, rank, nullptr) != 0) {
    profile.context = nullptr;
  }
  std::lock_guard<std::mutex> lock(gMutex);
  gComms[comm] = profile;
}

extern "C" void fakeProfilerCommFinalize(void* comm) {
  abi::ProfilerV5* p = plugin();
  if (p == nullptr) return;
  void* context = nullptr;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    auto it = gComms.find(comm);
    if (it == gComms.end()) return;
    context = it->second.context;
    gComms.erase(it);
  }
  if (context != nullptr) p->finalize(context);
}

extern "C" void fakeProfilerCall(void* comm, int coll, const char* func, size_t count, int datatype, int root) {
  abi::ProfilerV5* p = plugin();
  if (p == nullptr) return;
  void* context = nullptr;
  int mask = 0;
  {
    std::lock_guard<std::mutex> lock(gMutex);
    auto it = gComms.find(comm);
    if (it == gComms.end()) return;
    context = it->second.context;
    mask = it->second.mask;
  }
  abi::EventDescrV5 d{};
  d.type = coll ? abi::kEventCollApi : abi::kEventP2pApi;
  if (coll) {
    d.collApi.func = func;
    d.collApi.count = count;
    d.collApi.datatype = datatypeName(datatype);
    d.collApi.root = root;
  } else {
    d.p2pApi.func = func;
    d.p2pApi.count = count;
    d.p2pApi.datatype = datatypeName(datatype);
  }
  void* api = nullptr;
  if (context != nullptr && (mask & (coll ? abi::kEventCollApi : abi::kEventP2pApi))) p->startEvent(context, &api, &d);
  tPending.push_back({comm, coll != 0, func, count, datatype, root, api});
  if (api != nullptr) p->stopEvent(api);
  if (tGroupDepth == 0) launch(tPending);
}

extern "C" void fakeProfilerGroupStart(void) { ++tGroupDepth; }

extern "C" void fakeProfilerGroupEnd(void) {
  if (tGroupDepth > 0 && --tGroupDepth == 0) launch(tPending);
}
