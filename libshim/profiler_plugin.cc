// libncclshim.so as an NCCL profiler plugin (API v5, NCCL 2.28+): NCCL finds the exported
// `ncclProfiler_v5` when NCCL_PROFILER_PLUGIN names this library (NCCLSHIM_PROFILER=1 sets it,
// profiler_switch.cc). While the trace recorder is on, every collective and point-to-point task
// NCCL launches becomes an `nccl_task` record (algorithm, protocol, channels, warps, NCCL's
// sequence number) and every network proxy operation an `nccl_proxy` record (channel, peer, bytes
// summed over its steps). Both are joined to the API record of the call they came from: NCCL
// starts its CollApi / P2pApi event synchronously inside that call, where the API frame has set
// tCurrentApiOp (api_current_op.h); the API event's handle carries the call's sequence number,
// the task names that event as its parent, and the task's handle carries what its proxy
// operations need (profiler_task_join.h). Nothing is stored per API event or task: no lock,
// allocation or syscall on NCCL's paths; the records go through the recorder's per-thread rings.
// Recording off: init activates no event, and NCCL calls nothing else.
// A task's record is written whole at its start: NCCL starts and stops the task events of a
// launch in one host function (hostStreamPlanTask; between them it only hands the plan's proxy
// operations to its proxy thread), so the stop carries nothing to record. A task launched
// inside its own call, or (a grouped call's) inside the recorded ncclGroupEnd of its group, is
// held for that call's record and times, in place in the thread's ring (Recorder::holdTask: no
// clock read, no copy, no push of its own); any other is stamped and written at once.
// This path runs on NCCL's launching thread in every call, on caches and a TLB the job has cooled:
// it touches as few pages as it can (docs/profiler_plugin.md, "third pass").
// Proxy events fire only for network transfers (NCCL raises none for NVLink / P2P inside a host),
// so they cost nothing there (docs/profiler_plugin.md, "Grouped point-to-point with the plugin").
// Diagnostics: NCCLSHIM_PROFILER_EVENTS=<mask> activates exactly that set of NCCL's event bits;
// ncclshimProfilerSetEvents(mask) (exported; tests/gpu/torch_busbw.py calls it through ctypes)
// changes the set at run time, between calls, so that one process can time its calls with the
// plugin's events on and off in alternate windows;
// NCCLSHIM_PROFILER_RECORD=0 runs every callback but hands no record to the recorder;
// NCCLSHIM_PROFILER_COUNT=1 prints the callbacks per event type (and the recorder's counts) at
// each communicator's finalize; NCCLSHIM_PROFILER_NOOP=1 keeps the mask but makes every callback
// return at once (NCCL's own cost of raising the events).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <new>

#include "common/hot_section.h"
#include "common/log.h"
#include "common/self_time.h"
#include "common/settings.h"
#include "common/tsc_clock.h"
#include "libshim/api_current_op.h"
#include "libshim/nccl_profiler_abi.h"
#include "libshim/profiler_slots.h"
#include "libshim/profiler_step_log.h"
#include "libshim/profiler_task_join.h"
#include "libshim/record_hook.h"
#include "trace/recorder.h"
#include "trace/trace_format.h"
#include "trace/trace_record.h"

namespace nshim::profiler {
namespace {

namespace abi = ::nshim::profiler_abi;
using trace::ProxyRecord;
using trace::TaskRecord;

constexpr int kOk = 0;           // ncclSuccess
constexpr int kSystemError = 2;  // ncclSystemError

// One communicator as NCCL announced it at init.
struct CommContext {
  uint64_t commHash;
  int32_t rank;
  int32_t nranks;
  int32_t nnodes;
  // The shim's id of this communicator (0 until a recorded call raised an API event on it): every
  // recorded call names it in tCurrentApiOp, and NCCL raises the API event on this context.
  std::atomic<uint64_t> shimCommId{0};
};

constexpr size_t kProxySlots = 1 << 14;
SlotPool<ProxyRecord, kProxySlots> gProxies;
// Set by processSetup: proxy operations of another process have foreign parents.
NSHIM_HOT_DATA pid_t gPid = 0;

// Callback counts by event type bit (NCCLSHIM_PROFILER_COUNT=1): starts, state records, stops.
constexpr int kEventBits = 12;
constexpr int kStateSlots = 24;
struct CallbackCounts {
  std::atomic<uint64_t> starts[kEventBits];
  std::atomic<uint64_t> states[kStateSlots];  // by NCCL's state number
  std::atomic<uint64_t> stops[6];             // by HandleKind: none, API, task, proxy operation, step, timed step
};
NSHIM_HOT_DATA bool gCounting = false;  // set by processSetup, before NCCL raises any event
// NCCLSHIM_PROFILER_RECORD=0 (a diagnostic): every callback does its work but the records are not
// handed to the recorder, which separates the callbacks' cost from the trace writer's.
NSHIM_HOT_DATA bool gRecordsOn = true;
// NCCLSHIM_PROFILER_NOOP=1 (a diagnostic): the same activation mask, and a handle for the same
// events, but every callback returns at once: what NCCL's raising of the events costs by itself.
NSHIM_HOT_DATA bool gNoop = false;
CallbackCounts gCounts{};
// NCCL's activation mask word (the pointer init receives: NCCL keeps one per process and reads it
// at every API call: a global of libnccl, valid as long as NCCL is loaded); set by the first
// recording init, for ncclshimProfilerSetEvents.
std::atomic<int*> gMaskWord{nullptr};

int eventBit(uint64_t type) { return type == 0 ? kEventBits - 1 : std::min(__builtin_ctzll(type), kEventBits - 1); }

// NCCL's type names (ncclDatatypeToString) to its numbering; kNoDatatype when unknown.
int32_t datatypeFromNameSlow(const char* name) {
  static constexpr const char* kNames[trace::kNumDatatypes] = {
      "ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",   "ncclInt64",      "ncclUint64",
      "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
  if (name == nullptr) return trace::kNoDatatype;
  for (int i = 0; i < trace::kNumDatatypes; ++i) {
    if (std::strcmp(name, kNames[i]) == 0) return i;
  }
  return trace::kNoDatatype;
}

// NCCL names types with string literals (ncclDatatypeToString), so the same pointer comes back
// call after call: the thread's last lookup answers it without comparing strings.
NSHIM_HOT_CODE int32_t datatypeFromName(const char* name) {
  struct Last {
    const char* name;
    int32_t id;
  };
  // initial-exec: a plain %fs-relative load, not a __tls_get_addr call per event
  __attribute__((tls_model("initial-exec"))) static thread_local constinit Last last{nullptr, trace::kNoDatatype};
  if (name != nullptr && name == last.name) return last.id;
  int32_t id = datatypeFromNameSlow(name);
  last = {name, id};
  return id;
}

// A bounded copy (the record starts zeroed, so the terminator is there), inline: NCCL's names are
// a few bytes, and a call into libc's strnlen / memcpy would bring their code into a cold cache
// on every task. No cache by pointer as for the datatype: a caller may pass one buffer with
// changing text (tests/shim/fake_nccl_profiler.cc does, from std::string), and checking the text
// costs what copying it does.
template <size_t N>
inline void copyName(char (&out)[N], const char* name) {
  if (name == nullptr) return;
  for (size_t i = 0; i + 1 < N && name[i] != '\0'; ++i) out[i] = name[i];
}

// An API event's handle carries the recorded call's sequence number; the communicator's id is
// the context's (shimCommId). A call the shim does not record gets no handle (its tasks stay
// unjoined). Nothing is stored per API event: the task reads the handle NCCL gives it back as
// its parent, also when NCCL launches it later or on another thread (grouped calls,
// non-blocking communicators).
NSHIM_HOT_CODE void* startApi(CommContext& comm) {
  const CurrentApiOp current = tCurrentApiOp;
  if (current.commId == 0) return nullptr;
  if (comm.shimCommId.load(std::memory_order_relaxed) != current.commId) {
    comm.shimCommId.store(current.commId, std::memory_order_relaxed);
  }
  return makeHandle(HandleKind::kApi, current.seq);
}

// The API call a task came from, through its CollApi / P2pApi parent.
NSHIM_HOT_CODE void joinApi(const CommContext& comm, const void* parent, uint64_t* commId, uint64_t* seq,
                            uint32_t* flags) {
  if (handleKind(parent) != HandleKind::kApi) return;
  *commId = comm.shimCommId.load(std::memory_order_relaxed);
  *seq = handleTicket(parent);
  *flags |= trace::kTaskJoined;
}

// Where a task's record is built: in place in the thread's trace ring when NCCL launches it inside
// the recorded call it belongs to, or inside the recorded ncclGroupEnd of its group (held for that
// call's record and times, Recorder::holdTask: no clock read, no copy and no push of its own; the
// flag saying which in *heldFlag), else on the stack, stamped with the launch time and written at
// once (which writes the tasks held before it first: the file keeps NCCL's order).
TaskRecord* taskRecordFor(const CommContext& comm, const void* parent, TaskRecord* onStack, uint32_t* heldFlag) {
  const CurrentApiOp& current = tCurrentApiOp;
  if (!gRecordsOn) return onStack;
  uint32_t flag = trace::kTaskInGroupEnd;
  if (handleKind(parent) == HandleKind::kApi && current.holdTasks && current.commId != 0 &&
      current.seq == handleTicket(parent) && current.commId == comm.shimCommId.load(std::memory_order_relaxed)) {
    flag = trace::kTaskInCall;
  } else if (!current.inGroupEnd) {
    return onStack;
  }
  TaskRecord* held = trace::holdTask(current.startNs);
  if (held == nullptr) return onStack;
  *heldFlag = flag;
  return held;
}

// Out of line, so that pluginStartEvent stays a light dispatcher: NCCL also raises GroupApi and
// Group events, which the plugin ignores, on every call. The task's handle carries what its
// proxy operations need (profiler_task_join.h).
NSHIM_HOT_CODE __attribute__((noinline)) void* startTask(CommContext& comm, const abi::EventDescrV5& e) {
  const bool coll = e.type == abi::kEventColl;
  TaskRecord onStack;
  uint32_t heldFlag = 0;
  TaskRecord& r = *taskRecordFor(comm, e.parentObj, &onStack, &heldFlag);
  const bool held = &r != &onStack;
  r = trace::makeTaskRecord(coll ? trace::TaskKind::kColl : trace::TaskKind::kP2p);
  if (held) {
    r.flags = heldFlag;  // the times are the call's, set when it returns
  } else {
    r.startNs = tscNowNs();
    r.endNs = r.startNs;  // NCCL stops the task in the same host function (see the top)
  }
  r.ncclCommHash = comm.commHash;
  r.rank = e.rank;
  r.nranks = comm.nranks;
  r.nnodes = comm.nnodes;
  if (coll) {
    r.ncclSeq = e.coll.seqNumber;
    r.count = e.coll.count;
    r.rootOrPeer = e.coll.root;
    r.datatype = datatypeFromName(e.coll.datatype);
    r.nChannels = e.coll.nChannels;
    r.nWarps = e.coll.nWarps;
    copyName(r.func, e.coll.func);
    copyName(r.algo, e.coll.algo);
    copyName(r.proto, e.coll.proto);
  } else {
    r.count = e.p2p.count;
    r.rootOrPeer = e.p2p.peer;
    r.datatype = datatypeFromName(e.p2p.datatype);
    r.nChannels = e.p2p.nChannels;
    copyName(r.func, e.p2p.func);
  }
  joinApi(comm, e.parentObj, &r.commId, &r.seq, &r.flags);
  const TaskJoin join{r.seq, (r.flags & trace::kTaskJoined) != 0, ncclFuncNumber(r.func)};
  if (!held && gRecordsOn) trace::recordTask(r);
  return makeHandle(HandleKind::kTask, taskJoinTicket(join));
}

NSHIM_HOT_CODE __attribute__((noinline)) void* startProxyOp(CommContext& comm, const abi::EventDescrV5& e) {
  uint64_t ticket = gProxies.claim();
  ProxyRecord& r = gProxies.payload(ticket);
  r = trace::makeProxyRecord();
  r.startNs = tscNowNs();
  r.ncclCommHash = comm.commHash;
  r.rank = e.rank;
  r.isSend = e.proxyOp.isSend ? 1 : 0;
  r.channel = e.proxyOp.channelId;
  r.peer = e.proxyOp.peer;
  r.nSteps = e.proxyOp.nSteps;
  r.chunkSize = e.proxyOp.chunkSize;
  // The parent task lives in this process only when NCCL's proxy does.
  if (e.proxyOp.pid == gPid && handleKind(e.parentObj) == HandleKind::kTask) {
    const TaskJoin task = taskJoinOf(handleTicket(e.parentObj));
    if (task.joined) {
      r.commId = comm.shimCommId.load(std::memory_order_relaxed);
      r.seq = task.seq;
      r.flags = trace::kTaskJoined;
    }
    copyName(r.func, kNcclFuncNames[task.func]);
  }
  gProxies.publish(ticket);
  return makeHandle(HandleKind::kProxyOp, ticket);
}

// A step of a proxy operation in the step log (NCCLSHIM_PROFILER_STEPS): its entry names the operation;
// a full log falls back to the plain step handle.
__attribute__((noinline)) void* startTimedStep(const abi::EventDescrV5& e) {
  const uint64_t opTicket = handleTicket(e.parentObj);
  StepOwner owner;
  owner.proxyTicket = opTicket;
  ProxyRecord op;
  if (gProxies.read(opTicket, &op)) {
    owner.ncclCommHash = op.ncclCommHash;
    owner.commId = op.commId;
    owner.seq = op.seq;
    owner.rank = op.rank;
    owner.peer = op.peer;
    owner.channel = op.channel;
    owner.isSend = op.isSend != 0;
  }
  const uint64_t entry = stepLogStart(owner, e.proxyStep.step, tscNowNs());
  return entry == UINT64_MAX ? makeHandle(HandleKind::kProxyStep, opTicket) : makeHandle(HandleKind::kTimedStep, entry);
}

// Once per process, at its first recording communicator (NCCL may create communicators on several
// threads at once: the others wait here until it is done, so no event is raised before): the
// settings, and the slot pools touched (a few MB of zero pages) so that their pages are not
// faulted in one by one on NCCL's threads. Returns the activation mask.
uint64_t processSetup() {
  static const uint64_t mask = [] {
    gPid = getpid();
    gProxies.prefault();
    gCounting = settingBool(Setting::NCCLSHIM_PROFILER_COUNT);
    gRecordsOn = settingBool(Setting::NCCLSHIM_PROFILER_RECORD);
    gNoop = settingBool(Setting::NCCLSHIM_PROFILER_NOOP);
    stepLogSetUp();
    uint64_t events = abi::kEventCollApi | abi::kEventP2pApi | abi::kEventColl | abi::kEventP2p;
    if (settingBool(Setting::NCCLSHIM_PROFILER_PROXY)) events |= abi::kEventProxyOp | abi::kEventProxyStep;
    const int64_t chosen = settingInt(Setting::NCCLSHIM_PROFILER_EVENTS);  // 0..0xfff, or auto
    return chosen == kSettingAuto ? events : static_cast<uint64_t>(chosen);
  }();
  return mask;
}

int pluginInit(void** context, uint64_t commHash, int* eActivationMask, const char* commName, int nNodes, int nranks,
               int rank, abi::DebugLogger) {
  if (context == nullptr || eActivationMask == nullptr) return kSystemError;
  *context = nullptr;
  *eActivationMask = 0;
  if (!trace::enabled()) return kOk;                  // nothing to record into: NCCL raises no event
  static const Status settings = validateSettings();  // the plugin may be loaded without the shim
  if (!settings.ok()) {
    NS_WARN("profiler plugin off: {}", settings.message());
    return kSystemError;
  }
  auto* comm = new (std::nothrow) CommContext{commHash, rank, nranks, nNodes};
  if (comm == nullptr) return kSystemError;
  const uint64_t mask = processSetup();
  *context = comm;
  stepLogCommOpened();
  *eActivationMask = static_cast<int>(mask);
  gMaskWord.store(eActivationMask, std::memory_order_release);
  NS_INFO("profiler plugin: comm {:#x} ({}) rank {}/{} on {} nodes, events {:#x}", commHash,
          commName != nullptr ? commName : "", rank, nranks, nNodes, mask);
  return kOk;
}

NSHIM_HOT_CODE int pluginStartEvent(void* context, void** eHandle, abi::EventDescrV5* e) noexcept {
  if (eHandle == nullptr) return kOk;
  *eHandle = nullptr;
  if (context == nullptr || e == nullptr) return kOk;
  if (__builtin_expect(gCounting, 0)) { gCounts.starts[eventBit(e->type)].fetch_add(1, std::memory_order_relaxed); }
  if (__builtin_expect(gNoop, 0)) {
    // A handle of no kind for the events the plugin keeps a handle for, so that NCCL stops them
    // as it does normally; nothing for the rest, as normally.
    constexpr uint64_t kKept = abi::kEventCollApi | abi::kEventP2pApi | abi::kEventColl | abi::kEventP2p |
                               abi::kEventProxyOp | abi::kEventProxyStep;
    if (e->type & kKept) *eHandle = makeHandle(HandleKind::kNone, 0);
    return kOk;
  }
  // A closed trace window records nothing: NCCL's events are not followed either.
  if (__builtin_expect(traceWindowClosed(), 0)) return kOk;
  auto& comm = *static_cast<CommContext*>(context);
  switch (e->type) {
    case abi::kEventCollApi:
    case abi::kEventP2pApi: *eHandle = startApi(comm); break;
    case abi::kEventColl:
    case abi::kEventP2p: *eHandle = startTask(comm, *e); break;
    case abi::kEventProxyOp: *eHandle = startProxyOp(comm, *e); break;
    case abi::kEventProxyStep:
      // A step adds its bytes to its operation: the operation's slot, under the step kind (or, with
      // the step log on, its log entry, which names the operation).
      if (handleKind(e->parentObj) == HandleKind::kProxyOp) {
        *eHandle = __builtin_expect(stepLogOn(), 0) ? startTimedStep(*e)
                                                    : makeHandle(HandleKind::kProxyStep, handleTicket(e->parentObj));
      }
      break;
    default: break;  // group, kernel, control and network-plugin events are not recorded
  }
  return kOk;
}

NSHIM_HOT_CODE int pluginStopEvent(void* eHandle) noexcept {
  if (__builtin_expect(gCounting, 0)) {
    gCounts.stops[static_cast<int>(handleKind(eHandle))].fetch_add(1, std::memory_order_relaxed);
  }
  switch (handleKind(eHandle)) {
    case HandleKind::kProxyOp: {
      uint64_t ticket = handleTicket(eHandle);
      if (ProxyRecord* r = gProxies.find(ticket)) {
        r->endNs = tscNowNs();
        if (gRecordsOn) trace::recordProxy(*r);
        gProxies.retire(ticket);
      }
      break;
    }
    case HandleKind::kTimedStep: stepLogStop(handleTicket(eHandle), tscNowNs()); break;
    // API events end inside the call; a task was recorded (or held) at its start, and its handle
    // carries what the proxy operations NCCL starts later, on its proxy thread, need. Steps are
    // summed as they go.
    default: break;
  }
  return kOk;
}

NSHIM_HOT_CODE int pluginRecordEventState(void* eHandle, int state, abi::EventStateArgsV5* args) noexcept {
  if (__builtin_expect(gCounting, 0)) {
    gCounts.states[std::clamp(state, 0, kStateSlots - 1)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t proxyTicket = handleTicket(eHandle);
  if (handleKind(eHandle) == HandleKind::kTimedStep) {
    const uint64_t entry = handleTicket(eHandle);
    stepLogState(entry, state, args != nullptr ? args->proxyStep.transSize : 0, tscNowNs());
    if (!stepLogOwnerTicket(entry, &proxyTicket)) return kOk;
  } else if (handleKind(eHandle) != HandleKind::kProxyStep) {
    return kOk;
  }
  if (args == nullptr) return kOk;
  if (state != abi::kStateProxyStepSendWait && state != abi::kStateProxyStepRecvFlushWait) return kOk;
  if (ProxyRecord* r = gProxies.find(proxyTicket)) {  // only the proxy thread writes it
    r->bytes += args->proxyStep.transSize;
    ++r->stepsDone;
  }
  return kOk;
}

// One line per finalize, the process's counts so far:
// "starts <event bit>:<n> ...; states <state>:<n> ...; stops <handle kind>:<n> ...; recorder: ...".
void printCounts(const CommContext* comm) {
  char line[1024];
  size_t used = 0;
  auto append = [&](const char* format, auto... values) {
    if (used >= sizeof(line)) return;
    int n = std::snprintf(line + used, sizeof(line) - used, format, values...);
    if (n > 0) used += static_cast<size_t>(n);
  };
  auto counts = [&](const char* label, const std::atomic<uint64_t>* values, int n) {
    append("%s", label);
    for (int i = 0; i < n; ++i) {
      uint64_t c = values[i].load(std::memory_order_relaxed);
      if (c != 0) append(" %d:%llu", i, static_cast<unsigned long long>(c));
    }
  };
  append("ncclshim profiler: comm %#llx rank %d callbacks",
         static_cast<unsigned long long>(comm != nullptr ? comm->commHash : 0), comm != nullptr ? comm->rank : -1);
  counts("; starts", gCounts.starts, kEventBits);
  counts("; states", gCounts.states, kStateSlots);
  counts("; stops", gCounts.stops, 6);
  if (trace::Recorder* recorder = trace::globalRecorder()) {
    trace::RecorderStats st = recorder->stats();
    append("; recorder: %llu records written, %llu writer wakes by callers",
           static_cast<unsigned long long>(st.records), static_cast<unsigned long long>(st.producerWakes));
  }
  std::fprintf(stderr, "%s\n", line);
}

int pluginFinalize(void* context) noexcept {
  if (gCounting) printCounts(static_cast<const CommContext*>(context));
  delete static_cast<CommContext*>(context);
  (void)trace::flush();
  if (context != nullptr) stepLogCommClosed();
  return kOk;
}

// The diagnostic build's (common/self_time.h) callbacks: the plugin's own ones, timed.
int timedStartEvent(void* context, void** eHandle, abi::EventDescrV5* e) noexcept {
  const uint64_t start = selfTimeMark();
  const int result = pluginStartEvent(context, eHandle, e);
  addSelfTime(SelfTimeSpan::kPluginStart, start);
  return result;
}
int timedStopEvent(void* eHandle) noexcept {
  const uint64_t start = selfTimeMark();
  const int result = pluginStopEvent(eHandle);
  addSelfTime(SelfTimeSpan::kPluginStop, start);
  return result;
}

int guardedInit(void** context, uint64_t commHash, int* eActivationMask, const char* commName, int nNodes, int nranks,
                int rank, abi::DebugLogger logfn) noexcept {
  try {
    return pluginInit(context, commHash, eActivationMask, commName, nNodes, nranks, rank, logfn);
  } catch (...) {
    if (eActivationMask != nullptr) *eActivationMask = 0;
    return kSystemError;
  }
}

}  // namespace
}  // namespace nshim::profiler

extern "C" {
// Diagnostic: sets the events NCCL raises from its next call on (NCCL's event bits; 0 = none, as
// with no plugin subscribed) and returns the set before, or -1 while no recording communicator has
// initialised the plugin. Call between NCCL calls, not during one.
__attribute__((visibility("default"))) int ncclshimProfilerSetEvents(int mask) {
  int* word = nshim::profiler::gMaskWord.load(std::memory_order_acquire);
  if (word == nullptr) return -1;
  return __atomic_exchange_n(word, mask & 0xfff, __ATOMIC_RELAXED);
}

__attribute__((visibility("default"))) nshim::profiler_abi::ProfilerV5 ncclProfiler_v5 = {
    "ncclshim",
    nshim::profiler::guardedInit,
    nshim::kSelfTime ? nshim::profiler::timedStartEvent : nshim::profiler::pluginStartEvent,
    nshim::kSelfTime ? nshim::profiler::timedStopEvent : nshim::profiler::pluginStopEvent,
    nshim::profiler::pluginRecordEventState,
    nshim::profiler::pluginFinalize,
};
}
