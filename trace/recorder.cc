// Recorder: the hot path (thread ring lookup and push), thread registration, the writer thread,
// and the drain that merges every ring in global order into the trace file. Everything the drain
// touches is guarded by drainLock_ and is async-signal-safe, so a signal handler can drain too.
#include "trace/recorder.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "common/clock.h"
#include "common/hot_section.h"
#include "common/log.h"
#include "common/self_time.h"
#include "common/tsc_clock.h"
#include "trace/line_buffer.h"

namespace nshim::trace {
namespace {

constexpr int64_t kLockTimeoutNs = 10'000'000'000;

using detail::tThreadCache;

// The thread's references to its rings, released when the thread exits (slow path only).
struct ThreadRings {
  std::vector<RecordRing*> rings;
  ~ThreadRings() {
    for (RecordRing* ring : rings) {
      ring->markOrphaned();
      ring->release();
    }
  }
};
thread_local ThreadRings tRings;
std::atomic<uint64_t> gNextThreadToken{1};
thread_local uint64_t tThreadToken = 0;

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int64_t realtimeNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// mkdir -p with `mode`; true when `dir` exists as a directory afterwards.
bool makeDirs(const std::string& dir, mode_t mode) {
  std::string partial;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      partial = dir.substr(0, i);
      if (mkdir(partial.c_str(), mode) != 0 && errno != EEXIST) return false;
    }
  }
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Directories the recorder creates: private, or searchable by whom NCCLSHIM_TRACE_MODE lets read.
mode_t directoryMode(uint32_t fileMode) {
  mode_t mode = 0700;
  if (fileMode & 0040) mode |= 0050;
  if (fileMode & 0004) mode |= 0005;
  return mode;
}

}  // namespace

Recorder::Recorder(RecorderConfig config) : config_(std::move(config)) {
  id_.store(newRecorderId(), std::memory_order_relaxed);
  globalRank_.store(config_.envGlobalRank, std::memory_order_relaxed);
  header_.version = kTraceFormatVersion;
  header_.abi = static_cast<int32_t>(kTraceRecordAbi);
  header_.ringRecords = config_.ringRecords;
  header_.ncclEnvLeftOut = encodeNcclEnv(config_.ncclEnv, header_.ncclEnv, sizeof(header_.ncclEnv));
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  for (char* c = host; *c; ++c) {
    if (*c == '/' || *c == ' ') *c = '_';
  }
  copyFixed(header_.host, sizeof(header_.host), host);
  copyFixed(header_.job, sizeof(header_.job), config_.job);
  if (config_.compress && !config_.dir.empty()) {
    // Made here, not at the first record (which may come in a signal handler): it allocates.
    zstd_ = ZstdCompressor::create(3);
    if (zstd_ == nullptr) {
      NS_WARN("NCCLSHIM_TRACE_COMPRESS=zstd: {}; writing plain .jsonl",
              zstdAvailable() ? "out of memory" : zstdMissingText());
      config_.compress = false;
    }
  }
  resetProcessState();
  if (config_.dir.empty()) return;
  if (config_.dir.size() + config_.namePattern.size() > kPathBytes / 2 ||
      config_.namePattern.find('/') != std::string::npos || config_.namePattern.empty()) {
    startStatus_ = NS_ERROR(Code::kInvalidArgument, "trace dir/name too long or name has '/': {}/{}", config_.dir,
                            config_.namePattern);
  } else if (!makeDirs(config_.dir, directoryMode(config_.fileMode))) {
    startStatus_ = NS_ERROR(Code::kSystemError, "cannot create trace dir {}: {}", config_.dir, std::strerror(errno));
  } else {
    // Absolute, so that a later chdir() of the process does not move the file or break a rename.
    if (char* absolute = realpath(config_.dir.c_str(), nullptr)) {
      config_.dir = absolute;
      std::free(absolute);
    }
    active_ = true;
  }
  if (!startStatus_.ok()) NS_WARN("trace recording off: {}", startStatus_.message());
  registerLiveRecorder(this);
}

Recorder::~Recorder() {
  unregisterLiveRecorder(this);
  (void)close("close");
  for (auto& slot : rings_) {
    if (RecordRing* ring = slot.exchange(nullptr)) ring->release();
  }
  if (fd_ >= 0) ::close(fd_);
}

// Per-process state: at construction and again in a fork child.
void Recorder::resetProcessState() {
  header_.pid = getpid();
  header_.ppid = getppid();
  header_.startRealtimeNs = realtimeNs();
  header_.startMonotonicNs = nowNs();
  nextLineN_ = 0;
  comms_ = 0;
  ops_ = 0;
  tasks_ = 0;
  proxies_ = 0;
  steps_ = 0;
  invalid_ = 0;
  unregisteredDrops_ = 0;
  reclaimedDrops_ = 0;
  unwritten_ = 0;
  lossWarned_ = false;
  lossReported_ = false;
  inSignal_ = false;
  outTailNonRecords_ = 0;
  dropsReported_ = 0;
  writeErrno_ = 0;
  fileFailed_ = false;
  fileBytes_ = 0;
  cut_ = false;
  complete_ = false;
  endFrame_ = false;
  cutRecords_ = 0;
  if (zstd_ != nullptr) zstd_->reset();
  outLen_ = 0;
  path_[0] = '\0';
  copyFixed(lastReason_, sizeof(lastReason_), "close");
  lastSignal_ = 0;
}

inline RecordRing* Recorder::threadRing() {
  if (__builtin_expect(tThreadCache.recorderId == id_.load(std::memory_order_relaxed), 1)) return tThreadCache.ring;
  return registerThread();
}

template <typename Fill>
inline void Recorder::push(int64_t timeNs, Fill&& fill) noexcept {
  RecordRing* ring = threadRing();
  if (__builtin_expect(ring == nullptr, 0)) {
    if (active_) unregisteredDrops_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Tasks held for the call this thread is inside come first, in the order they were launched.
  if (__builtin_expect(tThreadCache.heldTasks != 0, 0)) publishHeld(ring, tThreadCache.heldStartNs, tscNowNs());
  RingSlot* slot = ring->reserve();
  if (__builtin_expect(slot == nullptr, 0)) {
    slot = waitForRoom(ring);
    if (slot == nullptr) {
      ring->countDrop();
      return;
    }
  }
  const uint64_t orderStart = selfTimeMark();
  slot->key = static_cast<uint64_t>(timeNs);
  addSelfTime(SelfTimeSpan::kOrderNumber, orderStart);
  fill(slot);
  published(ring, 1);
}

// After a push: makes `count` filled slots visible, wakes the writer when the ring is nearly full,
// and writes at once after a close.
inline void Recorder::published(RecordRing* ring, uint64_t count) noexcept {
  ring->publish(count);
  tThreadCache.nextSlot = ring->slotFromHead(0);  // the ring is this thread's (threadRing)
  if (__builtin_expect(ring->checkNearlyFull(), 0)) wakeWriter();
  if (__builtin_expect(closed_.load(std::memory_order_relaxed), 0)) lateFlush();
}

NSHIM_HOT_CODE void Recorder::recordOp(const OpRecord& record) noexcept {
  if (__builtin_expect(record.abi != kTraceRecordAbi, 0)) {
    invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  push(record.hostEndNs, [&](RingSlot* slot) {
    slot->kind = SlotKind::kOp;
    slot->op = record;
  });
}

// The held tasks' merge key and times, before they are published; no longer held.
inline void Recorder::stampHeld(RecordRing* ring, uint32_t held, uint64_t key, int64_t startNs,
                                int64_t endNs) noexcept {
  for (uint32_t i = 0; i < held; ++i) {
    RingSlot* slot = ring->slotFromHead(i);
    slot->key = key;
    slot->task.startNs = startNs;
    slot->task.endNs = endNs;
  }
  tThreadCache.heldTasks = 0;
}

// Makes the held tasks visible with the given times, in one push of their own (out of the hot
// code: a call's own record publishes them in recordCallOp).
void Recorder::publishHeld(RecordRing* ring, int64_t startNs, int64_t endNs) noexcept {
  const uint32_t held = tThreadCache.heldTasks;
  stampHeld(ring, held, static_cast<uint64_t>(endNs), startNs, endNs);
  published(ring, held);
}

NSHIM_HOT_CODE TaskRecord* Recorder::holdTask(int64_t callStartNs) noexcept {
  RecordRing* ring = threadRing();
  if (__builtin_expect(ring == nullptr, 0)) return nullptr;
  uint32_t held = tThreadCache.heldTasks;
  if (__builtin_expect(held == kMaxHeldTasks, 0)) {
    publishHeld(ring, tThreadCache.heldStartNs, tscNowNs());
    held = 0;
  }
  // Room for this task and the call's record: the slots past the head are this thread's alone
  // (the writer reads up to the head), so the room stays until the call's record takes it.
  if (!ring->hasRoom(held + 2)) return nullptr;
  if (held == 0) tThreadCache.heldStartNs = callStartNs;
  tThreadCache.heldTasks = held + 1;
  RingSlot* slot = ring->slotFromHead(held);
  slot->kind = SlotKind::kTask;
  return &slot->task;
}

NSHIM_HOT_CODE void Recorder::recordCallOp(const OpRecord& op) noexcept {
  RecordRing* ring = threadRing();
  const uint32_t held = tThreadCache.heldTasks;  // after threadRing: registerThread drops another recorder's
  // (The last hold left room for the op: hasRoom only guards against a misuse of holdTask.) A call
  // without held tasks takes the same path: one push of one record.
  if (__builtin_expect(ring == nullptr || op.abi != kTraceRecordAbi || !ring->hasRoom(held + 1), 0)) {
    if (ring != nullptr && held != 0) publishHeld(ring, tThreadCache.heldStartNs, tscNowNs());
    recordOp(op);  // waits for room, or counts the drop / the invalid record
    return;
  }
  const uint64_t orderStart = selfTimeMark();
  const auto key = static_cast<uint64_t>(op.hostEndNs);  // the call's end: no clock read here
  addSelfTime(SelfTimeSpan::kOrderNumber, orderStart);
  if (held != 0) stampHeld(ring, held, key, op.hostStartNs, op.hostEndNs);
  RingSlot* slot = ring->slotFromHead(held);
  slot->key = key;
  slot->kind = SlotKind::kOp;
  slot->op = op;
  published(ring, held + 1);
}

void Recorder::recordComm(const CommRecord& record) noexcept {
  if (__builtin_expect(record.abi != kTraceRecordAbi, 0)) {
    invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  push(record.timestampNs, [&](RingSlot* slot) {
    slot->kind = SlotKind::kComm;
    slot->comm = record;
  });
}

NSHIM_HOT_CODE void Recorder::recordTask(const TaskRecord& record) noexcept {
  if (__builtin_expect(record.abi != kTraceRecordAbi, 0)) {
    invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  push(record.endNs, [&](RingSlot* slot) {
    slot->kind = SlotKind::kTask;
    slot->task = record;
  });
}

NSHIM_HOT_CODE void Recorder::recordProxy(const ProxyRecord& record) noexcept {
  if (__builtin_expect(record.abi != kTraceRecordAbi, 0)) {
    invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  push(record.endNs, [&](RingSlot* slot) {
    slot->kind = SlotKind::kProxy;
    slot->proxy = record;
  });
}

void Recorder::recordStep(const StepRecord& record) noexcept {
  if (__builtin_expect(record.abi != kTraceRecordAbi, 0)) {
    invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  push(record.timestampNs, [&](RingSlot* slot) {
    slot->kind = SlotKind::kStep;
    slot->step = record;
  });
}

// Slow path, once per thread (and recorder): allocate and publish the thread's ring.
RecordRing* Recorder::registerThread() {
  if (!active_) return nullptr;
  // Tasks held in the ring of the recorder this thread pushed to before: no call's record will
  // follow them there (the thread owns a reference to that ring, so it is still there to count).
  if (tThreadCache.heldTasks != 0) {
    for (uint32_t i = 0; i < tThreadCache.heldTasks; ++i) tThreadCache.ring->countDrop();
    tThreadCache.heldTasks = 0;
  }
  try {
    std::lock_guard<std::mutex> lock(registryMutex_);
    uint64_t id = id_.load(std::memory_order_relaxed);
    if (tThreadToken == 0) tThreadToken = gNextThreadToken.fetch_add(1);
    auto& owned = tRings.rings;
    for (size_t i = 0; i < owned.size();) {
      if (owned[i]->recorderId() == id) {
        tThreadCache = {id, owned[i], owned[i]->slotFromHead(0), 0, 0};
        return owned[i];
      }
      if (owned[i]->onlyOneOwner()) {  // its recorder is gone
        owned[i]->release();
        owned[i] = owned.back();
        owned.pop_back();
      } else {
        ++i;
      }
    }
    if (rankNeedsEnv_) {
      rankNeedsEnv_ = false;
      if (globalRank_.load() == kNoRank) globalRank_.store(rankFromEnvironment());
    }
    owned.reserve(owned.size() + 1);
    auto* ring = new RecordRing(id, tThreadToken, config_.ringRecords);
    bool placed = false;
    for (auto& slot : rings_) {
      RecordRing* expected = nullptr;
      if (slot.compare_exchange_strong(expected, ring, std::memory_order_release)) {
        placed = true;
        break;
      }
    }
    if (!placed) {
      ring->release();
      ring->release();
      NS_WARN("trace: more than {} threads recording at once; records of this thread are dropped", kMaxRings);
      return nullptr;
    }
    owned.push_back(ring);
    tThreadCache = {id, ring, ring->slotFromHead(0), 0, 0};
    if (!writerStarted_ && !closed_.load()) startWriterLocked();
    return ring;
  } catch (...) { return nullptr; }
}

RingSlot* Recorder::waitForRoom(RecordRing* ring) {
  if (closed_.load(std::memory_order_relaxed)) {
    lateFlush();
    return ring->reserve();
  }
  // The writer is behind: wake it, spin a little, then sleep in short steps (the writer may need
  // this core) until the deadline; only then is the record dropped (and counted).
  wakeWriter();
  int64_t start = nowNs();
  int64_t deadline = start + config_.fullWaitNs;
  for (;;) {
    for (int i = 0; i < 64; ++i) cpuRelax();
    if (RingSlot* slot = ring->reserve()) return slot;
    int64_t now = nowNs();
    if (now >= deadline) return nullptr;
    if (now - start > 20'000) {
      timespec pause{0, 50'000};
      nanosleep(&pause, nullptr);
    }
  }
}

void Recorder::wakeWriter() {
  if (wakePending_.load(std::memory_order_relaxed) || wakePending_.exchange(true)) return;
  producerWakes_.fetch_add(1, std::memory_order_relaxed);
  wakeWord_.store(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&wakeWord_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void Recorder::startWriterLocked() {
  // The writer blocks every asynchronous signal: SIGTERM/SIGINT are handled by other threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  stop_.store(false);
  writerStarted_ = pthread_create(&writer_, nullptr, &Recorder::writerMain, this) == 0;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (writerStarted_) pthread_setname_np(writer_, "ncclshim-trace");
  if (!writerStarted_) NS_WARN("trace: cannot start the writer thread; records are written at flush");
}

void* Recorder::writerMain(void* self) {
  static_cast<Recorder*>(self)->writerLoop();
  return nullptr;
}

// The writer drains every NCCLSHIM_TRACE_FLUSH_MS, sooner while records arrive fast: after a drain
// that found more than a quarter of a ring's worth, the next one comes when, at the rate just seen,
// an eighth of a ring will have arrived (at least kMinDrainNs later); a quiet drain doubles the
// interval back. A busy producer's ring then stays below the 3/4 mark at which the
// producer itself wakes the writer (a futex wake on NCCL's calling thread, the writer then
// draining beside it). On an H100 host, recording with the fixed interval ran a grouped send/recv
// loop in its slow mode (~3 us more per iteration) in 9 of 9 rounds; the adaptive interval did
// not always (docs/profiler_plugin.md: suggestive, not proven).
void Recorder::writerLoop() {
  constexpr int64_t kMinDrainNs = 500'000;
  const int64_t longest = config_.drainIntervalNs;
  const int64_t shortest = std::min(longest, kMinDrainNs);
  int64_t interval = longest;
  int64_t lastDrainNs = nowNs();
  while (!stop_.load(std::memory_order_acquire)) {
    // The callers' stamps come from the TSC clock (common/tsc_clock.h), whose line this thread
    // keeps fitted to clock_gettime; the first refresh takes its first reading.
    refreshTscClock();
    if (wakeWord_.load(std::memory_order_acquire) == 0) {
      timespec wait{time_t(interval / 1'000'000'000), long(interval % 1'000'000'000)};
      syscall(SYS_futex, reinterpret_cast<uint32_t*>(&wakeWord_), FUTEX_WAIT_PRIVATE, 0, &wait, nullptr, 0);
    }
    wakeWord_.store(0, std::memory_order_relaxed);
    wakePending_.store(false, std::memory_order_release);
    if (stop_.load(std::memory_order_acquire)) break;
    if (drainLock_.lock(kLockTimeoutNs)) {
      uint64_t emitted = drainLocked(true);
      drainLock_.unlock();
      const int64_t now = nowNs();
      const uint64_t ring = config_.ringRecords;
      if (emitted > ring / 4) {
        double perRecordNs = double(now - lastDrainNs) / double(emitted);
        interval = std::clamp(static_cast<int64_t>(perRecordNs * double(ring / 8)), shortest, longest);
      } else if (emitted < ring / 16) {
        interval = std::min(longest, interval * 2);
      }
      lastDrainNs = now;
    }
  }
}

Status Recorder::writerStatus() const {
  int err = writeErrno_.load();
  if (err == 0) return Status::Ok();
  return NS_ERROR(Code::kSystemError, "writing trace file {}: {}", path_[0] ? path_ : config_.dir, std::strerror(err));
}

Status Recorder::flush() {
  if (!active_) return Status::Ok();
  if (!drainLock_.lock(kLockTimeoutNs)) { return NS_ERROR(Code::kTimeout, "trace flush: the drain lock stayed busy"); }
  uint64_t emitted = drainLocked(true);
  if (closed_.load() && emitted > 0) writeFooterLocked(lastReason_, lastSignal_);
  drainLock_.unlock();
  return writerStatus();
}

Status Recorder::close(const char* reason) {
  if (!active_) return Status::Ok();
  if (closed_.load()) return flush();
  stop_.store(true, std::memory_order_release);
  wakeWord_.store(1, std::memory_order_release);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&wakeWord_), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  {
    std::lock_guard<std::mutex> lock(registryMutex_);
    if (writerStarted_) pthread_join(writer_, nullptr);
    writerStarted_ = false;
    closed_.store(true, std::memory_order_seq_cst);
  }
  if (!drainLock_.lock(kLockTimeoutNs)) { return NS_ERROR(Code::kTimeout, "trace close: the drain lock stayed busy"); }
  drainLocked(true);
  writeFooterLocked(reason, 0);
  reportLossLocked();
  drainLock_.unlock();
  return writerStatus();
}

// A record arrived after close(): write it now, followed by a fresh footer.
void Recorder::lateFlush() {
  if (!drainLock_.lock(kLockTimeoutNs)) return;
  if (drainLocked(true) > 0) writeFooterLocked(lastReason_, lastSignal_);
  drainLock_.unlock();
}

std::string Recorder::path() const {
  auto& lock = const_cast<DrainLock&>(drainLock_);
  if (!lock.lock(kLockTimeoutNs)) return "";
  std::string out = path_;
  lock.unlock();
  return out;
}

RecorderStats Recorder::stats() const {
  RecorderStats s;
  s.comms = comms_.load();
  s.ops = ops_.load();
  s.tasks = tasks_.load();
  s.proxies = proxies_.load();
  s.steps = steps_.load();
  s.producerWakes = producerWakes_.load();
  s.cut = cutRecords_.load();
  s.invalid = invalid_.load();
  auto& lock = const_cast<DrainLock&>(drainLock_);
  if (lock.lock(kLockTimeoutNs)) {
    s.dropped = dropsReported_;
    s.unwritten = unwritten_;
    lock.unlock();
  }
  // Records formatted but lost with a failed write are counted by kind as formatted; not in the file.
  const uint64_t formatted = s.comms + s.ops + s.tasks + s.proxies + s.steps;
  s.records = formatted > s.unwritten ? formatted - s.unwritten : 0;
  return s;
}

}  // namespace nshim::trace
