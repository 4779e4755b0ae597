// The trace recorder: the shim hands it fixed-size records (trace_record.h); the calling thread
// copies each into its own ring (no allocation, no lock, no syscall) and a background writer drains
// all rings in global order into one JSON Lines file per process (FORMAT.md). The process-wide
// recorder is configured from the environment (NCCLSHIM_TRACE_DIR unset = off, one load and a
// branch per call); tests and tools may also run private Recorder instances.
#pragma once

#include <pthread.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "common/status.h"
#include "trace/ring.h"
#include "trace/trace_format.h"
#include "trace/trace_record.h"
#include "trace/zstd_stream.h"

namespace nshim::trace {

struct RecorderConfig {
  std::string dir;                             // NCCLSHIM_TRACE_DIR; empty = recording off
  std::string namePattern = "ncclshim-%h-%p";  // NCCLSHIM_TRACE_NAME: %h host, %p pid, %r rank, %j job
                                               // (default with a job: ncclshim-%j-%h-%p)
  uint32_t ringRecords = 4096;                 // NCCLSHIM_TRACE_RING: records per thread
  int64_t drainIntervalNs = 10'000'000;        // NCCLSHIM_TRACE_FLUSH_MS
  int64_t fullWaitNs = 100'000'000;            // NCCLSHIM_TRACE_FULL_WAIT_US: wait, then drop
  int32_t envGlobalRank = kNoRank;             // RANK / OMPI_COMM_WORLD_RANK / PMI_RANK / SLURM_PROCID
  bool handleSignals = false;                  // NCCLSHIM_TRACE_SIGNALS (process recorder only)
  uint32_t fileMode = 0600;                    // NCCLSHIM_TRACE_MODE (octal): the trace file's permissions
  bool warnings = true;                        // false with NCCLSHIM_DEBUG=NONE: no warning of a lost file
  std::vector<std::pair<std::string, std::string>> ncclEnv;  // the header's nccl_env (common/nccl_env.h)
  std::string job;        // SLURM_JOB_ID, else TORCHELASTIC_RUN_ID: header, %j, default name
  uint64_t maxBytes = 0;  // NCCLSHIM_TRACE_MAX_MB: the file stops here (0: no limit)
  bool compress = false;  // NCCLSHIM_TRACE_COMPRESS=zstd: `.jsonl.zst`

  static RecorderConfig fromEnvironment();
};

// The global rank named by the launcher's environment, or kNoRank.
int32_t rankFromEnvironment();
// The job named by the launcher's environment (SLURM_JOB_ID, else TORCHELASTIC_RUN_ID), or "".
std::string jobFromEnvironment();

struct RecorderStats {
  uint64_t records = 0;  // written to the file
  uint64_t comms = 0;
  uint64_t ops = 0;
  uint64_t dropped = 0;
  uint64_t invalid = 0;
  uint64_t tasks = 0;
  uint64_t proxies = 0;
  uint64_t steps = 0;
  uint64_t producerWakes = 0;  // times a recording thread woke the writer (its ring 3/4 full, or full)
  uint64_t unwritten = 0;      // of `dropped`: records the file could not take (cannot create or write it)
  uint64_t cut = 0;            // records not written because the file reached its size limit
};

// Lock for draining, owned by a thread id; async-signal-safe, with a deadline, and it refuses
// (instead of deadlocking) when a signal handler interrupts the owner itself.
class DrainLock {
 public:
  bool lock(int64_t timeoutNs);
  void unlock() { owner_.store(0, std::memory_order_release); }
  void forceReset() { owner_.store(0, std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> owner_{0};
};

namespace detail {
// The recording thread's cache of its ring in the recorder it last pushed to (recorderId, ring),
// the slot its next push writes (a hint for prefetchPush()), and the tasks it holds in that ring
// for the call it is inside (Recorder::holdTask): how many, and that call's start. The recorder's
// only thread-local on the hot path: trivially destructible, initial-exec (no TLS call); on one cache line.
struct alignas(64) ThreadCache {
  uint64_t recorderId;
  RecordRing* ring;
  RingSlot* nextSlot;
  uint32_t heldTasks;
  int64_t heldStartNs;
};
__attribute__((tls_model("initial-exec"))) inline constinit thread_local ThreadCache tThreadCache{0, nullptr, nullptr,
                                                                                                  0, 0};

// A write prefetch: the line comes owned (no second request when it is written), on x86 where
// PREFETCHW exists (elsewhere, and before Broadwell where it decodes as a no-op, a read one or
// nothing). Never faults.
inline void prefetchForWrite(const void* address) noexcept {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(address)));
#else
  __builtin_prefetch(address, 1, 3);
#endif
}
}  // namespace detail

class Recorder {
 public:
  static constexpr int kMaxRings = 1024;  // threads with live rings at once
  static constexpr size_t kOutBytes = 64 * 1024;
  static constexpr size_t kPathBytes = 4096;

  explicit Recorder(RecorderConfig config);
  ~Recorder();
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // False when recording is off (no dir) or the directory could not be created (status()).
  bool active() const { return active_; }
  const Status& status() const { return startStatus_; }

  // Hot path. Records whose abi is not kTraceRecordAbi are counted as invalid and skipped.
  void recordOp(const OpRecord& record) noexcept;
  void recordComm(const CommRecord& record) noexcept;
  // NCCL's decisions from the profiler plugin (libshim/profiler_plugin.cc).
  void recordTask(const TaskRecord& record) noexcept;
  void recordProxy(const ProxyRecord& record) noexcept;
  // An iteration mark (ncclshimMarkStep): a `step` line.
  void recordStep(const StepRecord& record) noexcept;
  // The tasks NCCL launches inside a recorded call, held for that call's record and written in
  // place: holdTask returns the next free slot of this thread's ring past the tasks held so far
  // (nullptr when the ring has no room for it and the call's record, or the thread has none),
  // which the caller fills whole (makeTaskRecord) before any other push of this thread. They
  // become visible with the call's record, recordCallOp, which gives them the call's times
  // (op.hostStartNs / hostEndNs) and its merge key (lines just before the op's), in one push: no
  // copy, no push and no clock read of their own. Any other push of the thread first writes them,
  // from `callStartNs` to that moment, as does the (kMaxHeldTasks + 1)-th hold: the file keeps the
  // order they were launched in (FORMAT.md, `nccl_task` times). Hot path.
  static constexpr uint32_t kMaxHeldTasks = 32;
  TaskRecord* holdTask(int64_t callStartNs) noexcept;
  void recordCallOp(const OpRecord& op) noexcept;

  // A hint at the start of a recorded call, before the NCCL call: asks for the lines this thread's
  // next push reads and writes (the recorder's line, its ring's head, the next two slots) so that their
  // misses and page walks overlap each other and the call instead of coming one after the other at
  // the push, on caches and a TLB the job has cooled. Loads only this thread's cache; faults nothing.
  // A thread without a ring yet gets one here, once, before the NCCL call: not inside NCCL's launch,
  // where the profiler plugin's first holdTask would otherwise take the registry's lock.
  void prefetchPush() noexcept {
    __builtin_prefetch(&id_, 0, 3);  // read only: no push writes that line
    // Fields read one by one, as the push does (GCC 12's UBSan took a reference bound to this
    // thread-local for a null one).
    RecordRing* ring = detail::tThreadCache.ring;
    if (__builtin_expect(ring == nullptr, 0)) {
      (void)registerThread();
      return;
    }
    ring->prefetchProducer();
    const char* slot = reinterpret_cast<const char*>(detail::tThreadCache.nextSlot);
    if (slot == nullptr) return;
    for (size_t at = 0; at < 2 * sizeof(RingSlot); at += 64) detail::prefetchForWrite(slot + at);
    detail::prefetchForWrite(slot + 2 * sizeof(RingSlot) - 1);
  }

  // Writes every record pushed so far (by any thread) before returning; returns the writer's
  // first error (sticky).
  Status flush();
  // flush(), a footer, and the writer stops. Records after close are written synchronously,
  // each followed by a fresh footer. Idempotent.
  Status close(const char* reason = "close");

  std::string path() const;  // "" until the file exists (it is created with the first record)
  RecorderStats stats() const;
  int32_t globalRank() const { return globalRank_.load(std::memory_order_relaxed); }

  // Process hooks (recorder_process.cc).
  void signalFlush(int signal, bool terminating);
  void forkPrepare();
  void forkParent();
  void forkChild();

 private:
  // One record of this thread, whose end time (its line's t_end_ns / t_ns) `timeNs` is its merge key.
  template <typename Fill>
  void push(int64_t timeNs, Fill&& fill) noexcept;
  void published(RecordRing* ring, uint64_t count) noexcept;
  void stampHeld(RecordRing* ring, uint32_t held, uint64_t key, int64_t startNs, int64_t endNs) noexcept;
  void publishHeld(RecordRing* ring, int64_t startNs, int64_t endNs) noexcept;
  RecordRing* threadRing();
  RecordRing* registerThread();
  RingSlot* waitForRoom(RecordRing* ring);
  void wakeWriter();
  void startWriterLocked();
  static void* writerMain(void* self);
  void writerLoop();

  uint64_t drainLocked(bool allowReclaim);  // returns the records written
  void emitSlot(const RingSlot& slot);
  void emitLine(const char* line, size_t length);
  void flushOut();
  void warnLocked(const char* what, const char* path, int err);
  void noteOtherName(const char* wanted);
  void reportLossLocked();
  void logLocked(std::string_view message);
  bool openFileLocked();
  // `partial`: the name while the file is written (".part" after it), else its final name.
  void buildPath(char* out, size_t capacity, int32_t rank, bool partial) const;
  void completeFileLocked();                               // renames the .part file to its final name
  void cutLocked();                                        // the size limit: footer, final name, no more records
  size_t writeAllLocked(const char* data, size_t length);  // to fd_: the bytes written (fewer: fd_ closed)
  static bool zstdSink(void* self, const char* data, size_t length);
  void adoptRankLocked(int32_t rank);
  void writeFooterLocked(const char* reason, int signal);
  void lateFlush();
  void resetProcessState();
  Status writerStatus() const;

  RecorderConfig config_;
  Status startStatus_;
  bool active_ = false;
  // What every push reads (and none writes), on one line of its own.
  alignas(64) std::atomic<uint64_t> id_{0};  // thread caches match on it; renewed in a fork child
  std::atomic<bool> closed_{false};
  alignas(64) std::atomic<RecordRing*> rings_[kMaxRings] = {};
  std::mutex registryMutex_;           // thread registration and writer start
  DrainLock drainLock_;                // everything below is guarded by it
  std::atomic<uint32_t> wakeWord_{0};  // futex the writer sleeps on
  std::atomic<bool> wakePending_{false};
  std::atomic<bool> stop_{false};
  bool writerStarted_ = false;
  pthread_t writer_{};
  bool forkHeldDrain_ = false;
  static constexpr int64_t kForkLockTimeoutNs = 5'000'000'000;
  bool rankNeedsEnv_ = false;  // fork child: read the launcher rank again
  std::atomic<int32_t> globalRank_{kNoRank};

  int fd_ = -1;
  uint64_t fileBytes_ = 0;  // bytes written to the file (compressed, with zstd)
  bool cut_ = false;        // the size limit was reached: nothing more is written
  bool complete_ = false;   // renamed from its .part name (a footer was written)
  bool endFrame_ = false;   // zstd: the next flushOut ends the frame (a footer)
  std::atomic<uint64_t> cutRecords_{0};
  std::unique_ptr<ZstdCompressor> zstd_;
  char path_[kPathBytes] = {};
  char wantedPath_[kPathBytes] = {};  // scratch of openFileLocked / adoptRankLocked
  char chosenPath_[kPathBytes] = {};
  char note_[2 * kPathBytes + 256] = {};  // scratch of the warnings (drain lock held)
  TraceHeader header_{};
  std::atomic<uint64_t> comms_{0}, ops_{0}, tasks_{0}, proxies_{0}, steps_{0}, invalid_{0}, unregisteredDrops_{0};
  std::atomic<uint64_t> producerWakes_{0};
  uint64_t reclaimedDrops_ = 0;
  uint64_t dropsReported_ = 0;
  bool fileFailed_ = false;       // open or write failed: records are counted as dropped
  bool lossWarned_ = false;       // the first failure was announced (once per process)
  bool lossReported_ = false;     // the count of lost records was announced (at close / signal)
  bool inSignal_ = false;         // the drain runs in a signal handler: raw write(2) for warnings
  uint64_t unwritten_ = 0;        // records formatted but not written, or never formatted (no file)
  size_t outTailNonRecords_ = 0;  // header / drops / footer lines at the end of out_
  std::atomic<int> writeErrno_{0};
  char lastReason_[16] = "close";
  int lastSignal_ = 0;
  uint64_t nextLineN_ = 0;  // the next line's `n`: the writer numbers lines as it writes them
  size_t outLen_ = 0;
  char out_[kOutBytes];
  char line_[kFormatLineBytes];
  RecordRing* merge_[kMaxRings];  // drain scratch: rings with records
  uint64_t mergePos_[kMaxRings];
  uint64_t mergeEnd_[kMaxRings];
};

// The process-wide recorder, configured from the environment at the first call.
namespace detail {
extern std::atomic<int> gGlobalState;  // -1 not yet configured, 0 off, 1 on
extern Recorder* gGlobalRecorder;
bool initGlobalSlow();
}  // namespace detail

inline bool enabled() {
  int state = detail::gGlobalState.load(std::memory_order_acquire);
  if (__builtin_expect(state >= 0, 1)) return state == 1;
  return detail::initGlobalSlow();
}
// nullptr when recording is off.
inline Recorder* globalRecorder() { return enabled() ? detail::gGlobalRecorder : nullptr; }

inline void recordOp(const OpRecord& record) {
  if (enabled()) detail::gGlobalRecorder->recordOp(record);
}
inline void recordComm(const CommRecord& record) {
  if (enabled()) detail::gGlobalRecorder->recordComm(record);
}
inline void recordTask(const TaskRecord& record) {
  if (enabled()) detail::gGlobalRecorder->recordTask(record);
}
inline void recordProxy(const ProxyRecord& record) {
  if (enabled()) detail::gGlobalRecorder->recordProxy(record);
}
inline void recordStep(const StepRecord& record) {
  if (enabled()) detail::gGlobalRecorder->recordStep(record);
}
inline void prefetchPush() {
  if (enabled()) detail::gGlobalRecorder->prefetchPush();
}
inline TaskRecord* holdTask(int64_t callStartNs) {
  return enabled() ? detail::gGlobalRecorder->holdTask(callStartNs) : nullptr;
}
inline void recordCallOp(const OpRecord& op) {
  if (enabled()) detail::gGlobalRecorder->recordCallOp(op);
}
// For the shim at ncclCommDestroy / ncclCommAbort / finalize; Ok when recording is off.
inline Status flush() { return enabled() ? detail::gGlobalRecorder->flush() : Status::Ok(); }

// Process hooks: fork handlers for every live recorder, exit and signal handlers for the global
// one (recorder_process.cc).
void registerLiveRecorder(Recorder* recorder);
void unregisterLiveRecorder(Recorder* recorder);
uint64_t newRecorderId();

}  // namespace nshim::trace
