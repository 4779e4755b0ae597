// MPI session and watchdog. Every collective is called from the main thread only
// (MPI_THREAD_FUNNELED); the watchdog thread never calls MPI: on expiry it prints and _exit()s,
// which makes mpirun end the job.
#include "phynet/mpi_session.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/clock.h"

namespace nshim::phynet {

MpiWatchdog::MpiWatchdog() : thread_([this] { loop(); }) {}

MpiWatchdog::~MpiWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void MpiWatchdog::arm(std::string phase, double seconds, int rank) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    phase_ = std::move(phase);
    seconds_ = seconds;
    rank_ = rank;
    deadlineNs_ = nowNs() + static_cast<int64_t>(seconds * 1e9);
  }
  changed_.notify_all();
}

void MpiWatchdog::disarm() {
  std::lock_guard<std::mutex> lock(mutex_);
  deadlineNs_ = 0;
}

void MpiWatchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_) {
    if (deadlineNs_ == 0) {
      changed_.wait_for(lock, std::chrono::milliseconds(500));
      continue;
    }
    if (nowNs() >= deadlineNs_) {
      std::fprintf(stderr,
                   "phynet: rank %d: MPI phase '%s' did not complete within %.0f s: another rank is dead or stuck "
                   "(see its messages); giving up\n",
                   rank_, phase_.c_str(), seconds_);
      std::fflush(stderr);
      std::fflush(stdout);
      _exit(1);
    }
    changed_.wait_for(lock, std::chrono::milliseconds(100));
  }
}

namespace {

// Arms the watchdog for one MPI call (RAII).
class Phase {
 public:
  Phase(MpiWatchdog& watchdog, const char* name, double seconds, int rank) : watchdog_(watchdog) {
    watchdog_.arm(name, seconds, rank);
  }
  ~Phase() { watchdog_.disarm(); }

 private:
  MpiWatchdog& watchdog_;
};

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv, double phaseSeconds) : phaseSeconds_(phaseSeconds) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiSession::~MpiSession() {
  Phase phase(watchdog_, "finalize", phaseSeconds_, rank_);
  MPI_Finalize();
}

void MpiSession::barrier(const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  MPI_Barrier(MPI_COMM_WORLD);
}

bool MpiSession::allOk(bool ok, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  int mine = ok ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

int MpiSession::firstFailing(bool failed, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  int mine = failed ? rank_ : size_, first = size_;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return first == size_ ? -1 : first;
}

void MpiSession::broadcast(void* data, size_t bytes, int root, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD);
}

void MpiSession::broadcastWords(std::vector<int64_t>* words, int root, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  uint64_t size = words->size();
  MPI_Bcast(&size, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
  words->resize(size);
  if (size > 0) MPI_Bcast(words->data(), static_cast<int>(size), MPI_INT64_T, root, MPI_COMM_WORLD);
}

std::vector<uint64_t> MpiSession::allGather(uint64_t value, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  std::vector<uint64_t> all(size_);
  MPI_Allgather(&value, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  return all;
}

std::vector<std::string> MpiSession::allGatherStrings(const std::string& value, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  std::vector<char> mine(kMaxGatheredString, '\0');
  std::copy_n(value.begin(), std::min(value.size(), kMaxGatheredString - 1), mine.begin());
  std::vector<char> all(kMaxGatheredString * static_cast<size_t>(size_));
  MPI_Allgather(mine.data(), static_cast<int>(kMaxGatheredString), MPI_CHAR, all.data(),
                static_cast<int>(kMaxGatheredString), MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (int r = 0; r < size_; ++r) out.emplace_back(all.data() + kMaxGatheredString * static_cast<size_t>(r));
  return out;
}

std::vector<std::vector<int64_t>> MpiSession::gatherToRoot(const std::vector<int64_t>& values, const char* name) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  int count = static_cast<int>(values.size());
  std::vector<int> counts(rank_ == 0 ? size_ : 0), offsets(rank_ == 0 ? size_ : 0);
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int64_t> flat;
  if (rank_ == 0) {
    size_t total = 0;
    for (int r = 0; r < size_; ++r) {
      offsets[r] = static_cast<int>(total);
      total += static_cast<size_t>(counts[r]);
    }
    flat.resize(total);
  }
  MPI_Gatherv(values.data(), count, MPI_INT64_T, flat.data(), counts.data(), offsets.data(), MPI_INT64_T, 0,
              MPI_COMM_WORLD);
  std::vector<std::vector<int64_t>> out;
  if (rank_ == 0) {
    for (int r = 0; r < size_; ++r) out.emplace_back(flat.begin() + offsets[r], flat.begin() + offsets[r] + counts[r]);
  }
  return out;
}

void MpiSession::gatherToRootEach(const std::vector<int64_t>& values, const char* name,
                                  const std::function<void(int rank, std::vector<int64_t>& words)>& take) {
  Phase phase(watchdog_, name, phaseSeconds_, rank_);
  constexpr int kTag = 77;
  if (rank_ != 0) {
    MPI_Send(values.data(), static_cast<int>(values.size()), MPI_INT64_T, 0, kTag, MPI_COMM_WORLD);
    return;
  }
  std::vector<int64_t> words = values;
  take(0, words);
  for (int r = 1; r < size_; ++r) {
    MPI_Status status;
    MPI_Probe(r, kTag, MPI_COMM_WORLD, &status);
    int count = 0;
    MPI_Get_count(&status, MPI_INT64_T, &count);
    words.assign(static_cast<size_t>(count), 0);
    MPI_Recv(words.data(), count, MPI_INT64_T, r, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    take(r, words);
  }
  words = {};
}

}  // namespace nshim::phynet
