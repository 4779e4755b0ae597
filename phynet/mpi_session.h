// MPI for phynet, and only what phynet uses it for: launch (rank and size), barriers, agreement on
// outcomes, broadcasting bootstrap ids and gathering the report. MPI calls have no deadline of
// their own, so every blocking call here runs under a watchdog: a phase that does not finish within
// its time ends the process with a message naming the phase (a rank is dead or stuck elsewhere).
// Only this header and mpi_*.cc / phynet_main.cc see <mpi.h>.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace nshim::phynet {

// Ends the process (exit status 1) if a phase armed on it outlives its deadline.
class MpiWatchdog {
 public:
  MpiWatchdog();
  ~MpiWatchdog();
  MpiWatchdog(const MpiWatchdog&) = delete;
  MpiWatchdog& operator=(const MpiWatchdog&) = delete;

  void arm(std::string phase, double seconds, int rank);
  void disarm();

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::string phase_;
  int64_t deadlineNs_ = 0;  // 0 = disarmed
  int rank_ = -1;
  double seconds_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

// MPI_Init on construction, MPI_Finalize on destruction (RAII). One per process.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv, double phaseSeconds);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  void setPhaseSeconds(double seconds) { phaseSeconds_ = seconds; }

  void barrier(const char* phase);
  // True on every rank when `ok` is true on every rank.
  bool allOk(bool ok, const char* phase);
  // The lowest rank whose `failed` is true, or -1.
  int firstFailing(bool failed, const char* phase);
  void broadcast(void* data, size_t bytes, int root, const char* phase);
  // Root's `words` to every rank (resized there).
  void broadcastWords(std::vector<int64_t>* words, int root, const char* phase);
  std::vector<uint64_t> allGather(uint64_t value, const char* phase);
  // Every rank's string (each cut at kMaxGatheredString bytes).
  std::vector<std::string> allGatherStrings(const std::string& value, const char* phase);
  static constexpr size_t kMaxGatheredString = 1024;
  // Rank 0 receives every rank's `values` (other ranks get an empty result).
  std::vector<std::vector<int64_t>> gatherToRoot(const std::vector<int64_t>& values, const char* phase);
  // The same, one rank at a time: rank 0 hands each rank's words (its own first) to `take` before
  // receiving the next, so it never holds every rank's words at once.
  void gatherToRootEach(const std::vector<int64_t>& values, const char* phase,
                        const std::function<void(int rank, std::vector<int64_t>& words)>& take);

 private:
  int rank_ = 0;
  int size_ = 1;
  double phaseSeconds_;
  MpiWatchdog watchdog_;
};

}  // namespace nshim::phynet
