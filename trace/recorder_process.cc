// The recorder's ties to the process: configuration from the environment, the process-wide
// recorder, its exit and SIGTERM/SIGINT flush (chained to the previous handlers), fork handlers
// that give a child its own file, and the drain lock those paths share.
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "common/clock.h"
#include "common/env.h"
#include "common/hot_section.h"
#include "common/log.h"
#include "common/nccl_env.h"
#include "common/settings.h"
#include "trace/recorder.h"

namespace nshim::trace {
namespace {

// Non-negative integer value of an environment variable, or `fallback`.
int64_t envNumber(const char* name, int64_t fallback, int64_t lo, int64_t hi) {
  const char* raw = std::getenv(name);
  if (raw == nullptr || *raw == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(raw, &end, 10);
  if (errno != 0 || *end != '\0' || value < lo || value > hi) {
    NS_WARN("ignoring {}={}: expected an integer in [{}, {}]", name, raw, lo, hi);
    return fallback;
  }
  return value;
}

// NCCLSHIM_TRACE_MODE: the trace files' permissions in octal (e.g. 0644); 0600 when unset.
uint32_t traceFileMode() {
  return static_cast<uint32_t>(std::stoul(settingString(Setting::NCCLSHIM_TRACE_MODE), nullptr, 8));
}

std::mutex gLiveMutex;
std::vector<Recorder*>& liveRecorders() {
  static auto* live = new std::vector<Recorder*>();  // never destroyed: used at exit and fork
  return *live;
}
std::atomic<uint64_t> gNextRecorderId{1};

void forkPrepare() {
  gLiveMutex.lock();
  for (Recorder* r : liveRecorders()) r->forkPrepare();
}
void forkParent() {
  for (Recorder* r : liveRecorders()) r->forkParent();
  gLiveMutex.unlock();
}
void forkChild() {
  for (Recorder* r : liveRecorders()) r->forkChild();
  gLiveMutex.unlock();
}

constexpr int kHandledSignals[] = {SIGTERM, SIGINT};
struct sigaction gPrevious[2];

int signalIndex(int sig) { return sig == SIGTERM ? 0 : 1; }

// Flush synchronously, then do what the previous disposition would have done.
void onSignal(int sig, siginfo_t* info, void* context) {
  int savedErrno = errno;
  struct sigaction* prev = &gPrevious[signalIndex(sig)];
  bool isDefault = prev->sa_handler == SIG_DFL;
  if (detail::gGlobalRecorder != nullptr) detail::gGlobalRecorder->signalFlush(sig, isDefault);
  if (isDefault) {
    sigaction(sig, prev, nullptr);
    raise(sig);  // blocked until this handler returns, then the default action ends the process
  } else if (prev->sa_handler != SIG_IGN) {
    if (prev->sa_flags & SA_SIGINFO) prev->sa_sigaction(sig, info, context);
    else prev->sa_handler(sig);
  }
  errno = savedErrno;
}

void installSignalHandlers() {
  for (int sig : kHandledSignals) {
    struct sigaction current;
    if (sigaction(sig, nullptr, &current) != 0) continue;
    if (current.sa_handler == SIG_IGN) continue;  // e.g. SIGINT of a background job: keep ignoring
    gPrevious[signalIndex(sig)] = current;
    struct sigaction mine {};
    mine.sa_sigaction = &onSignal;
    mine.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
    sigemptyset(&mine.sa_mask);
    for (int other : kHandledSignals) sigaddset(&mine.sa_mask, other);
    sigaction(sig, &mine, nullptr);
  }
}

void closeGlobalAtExit() {
  if (detail::gGlobalRecorder != nullptr) (void)detail::gGlobalRecorder->close("exit");
}

}  // namespace

namespace detail {
NSHIM_HOT_DATA constinit std::atomic<int> gGlobalState{-1};
NSHIM_HOT_DATA Recorder* gGlobalRecorder = nullptr;

bool initGlobalSlow() {
  static std::mutex initMutex;
  std::lock_guard<std::mutex> lock(initMutex);
  int state = gGlobalState.load();
  if (state >= 0) return state == 1;
  RecorderConfig config = RecorderConfig::fromEnvironment();
  bool on = false;
  if (!config.dir.empty()) {
    try {
      auto* recorder = new Recorder(config);  // never deleted: records may come until _exit
      if (recorder->active()) {
        gGlobalRecorder = recorder;
        if (config.handleSignals) installSignalHandlers();
        std::atexit(&closeGlobalAtExit);
        on = true;
      }
    } catch (...) { on = false; }
  }
  gGlobalState.store(on ? 1 : 0, std::memory_order_release);
  return on;
}
}  // namespace detail

int32_t rankFromEnvironment() {
  for (const char* name : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    int64_t value = envNumber(name, -1, 0, INT32_MAX);
    if (value >= 0) return static_cast<int32_t>(value);
  }
  return kNoRank;
}

std::string jobFromEnvironment() {
  for (const char* name : {"SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    std::string job(value);
    if (job.size() > kHostNameBytes - 1) job.resize(kHostNameBytes - 1);
    for (char& c : job) {
      if (c == '/' || c == ' ' || c == '%' || static_cast<unsigned char>(c) < 0x20) c = '_';
    }
    return job;
  }
  return "";
}

RecorderConfig RecorderConfig::fromEnvironment() {
  RecorderConfig config;
  config.dir = settingString(Setting::NCCLSHIM_TRACE_DIR);
  config.job = jobFromEnvironment();
  if (!config.job.empty()) config.namePattern = "ncclshim-%j-%h-%p";
  if (settingIsSet(Setting::NCCLSHIM_TRACE_NAME)) config.namePattern = settingString(Setting::NCCLSHIM_TRACE_NAME);
  config.maxBytes = static_cast<uint64_t>(settingDouble(Setting::NCCLSHIM_TRACE_MAX_MB) * 1024.0 * 1024.0);
  config.compress = settingString(Setting::NCCLSHIM_TRACE_COMPRESS) == "zstd";
  config.ringRecords = static_cast<uint32_t>(settingInt(Setting::NCCLSHIM_TRACE_RING));
  config.drainIntervalNs = settingInt(Setting::NCCLSHIM_TRACE_FLUSH_MS) * 1'000'000;
  config.fullWaitNs = settingInt(Setting::NCCLSHIM_TRACE_FULL_WAIT_US) * 1000;
  config.handleSignals = settingBool(Setting::NCCLSHIM_TRACE_SIGNALS);
  config.envGlobalRank = rankFromEnvironment();
  config.fileMode = traceFileMode();
  config.warnings = logLevel() != LogLevel::kNone;
  config.ncclEnv = ncclEnvOfProcess();
  return config;
}

bool DrainLock::lock(int64_t timeoutNs) {
  const int64_t self = syscall(SYS_gettid);
  int64_t deadline = 0;
  for (int spins = 0;; ++spins) {
    int64_t expected = 0;
    if (owner_.compare_exchange_weak(expected, self, std::memory_order_acquire)) return true;
    if (expected == self) return false;  // a signal handler interrupted this thread's own drain
    if (spins < 200) continue;
    if (deadline == 0) deadline = nowNs() + timeoutNs;
    if (nowNs() >= deadline) return false;
    timespec pause{0, 20'000};
    nanosleep(&pause, nullptr);
  }
}

uint64_t newRecorderId() { return gNextRecorderId.fetch_add(1); }

void registerLiveRecorder(Recorder* recorder) {
  static std::once_flag once;
  std::call_once(once, [] { pthread_atfork(&forkPrepare, &forkParent, &forkChild); });
  std::lock_guard<std::mutex> lock(gLiveMutex);
  liveRecorders().push_back(recorder);
}

void unregisterLiveRecorder(Recorder* recorder) {
  std::lock_guard<std::mutex> lock(gLiveMutex);
  auto& live = liveRecorders();
  live.erase(std::remove(live.begin(), live.end(), recorder), live.end());
}

void Recorder::signalFlush(int signal, bool terminating) {
  if (!active_ || !drainLock_.lock(1'000'000'000)) return;
  bool wasClosed = closed_.load();
  inSignal_ = true;
  uint64_t emitted = drainLocked(false);
  if (terminating) closed_.store(true);
  if (terminating ? (!wasClosed || emitted > 0) : (wasClosed && emitted > 0)) {
    writeFooterLocked(terminating ? "signal" : lastReason_, terminating ? signal : lastSignal_);
  }
  if (terminating) reportLossLocked();
  inSignal_ = false;
  drainLock_.unlock();
}

// Fork: the parent's locks are taken so the child copies a consistent recorder.
void Recorder::forkPrepare() {
  registryMutex_.lock();
  forkHeldDrain_ = drainLock_.lock(kForkLockTimeoutNs);
}

void Recorder::forkParent() {
  if (forkHeldDrain_) drainLock_.unlock();
  registryMutex_.unlock();
}

// The child keeps none of the parent's threads, records or file: it gets a new recorder id (every
// thread cache misses and registers a fresh ring; the first one starts a new writer), a new file
// named with its own pid, and it reads the launcher's rank again.
void Recorder::forkChild() {
  id_.store(newRecorderId(), std::memory_order_relaxed);
  for (auto& entry : rings_) {
    RecordRing* ring = entry.exchange(nullptr);
    if (ring) ring->discardAll();  // the parent's threads: not in the child; left to leak
  }
  writerStarted_ = false;
  stop_.store(false);
  closed_.store(false);
  wakeWord_.store(0);
  wakePending_.store(false);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  globalRank_.store(kNoRank);
  rankNeedsEnv_ = true;
  resetProcessState();
  drainLock_.forceReset();
  registryMutex_.unlock();
}

}  // namespace nshim::trace
