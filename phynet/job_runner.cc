// Launching the jobs of a job file (job_runner.h). Why one mpirun per job rather than one split
// world: each job keeps phynet's single-job path unchanged (its communicators, its report, its
// --verify), a job can be run alone with exactly the same command, and a failing job cannot take
// the others' MPI world down with it. The shared start is this process: every job is forked at its
// offset from one clock reading.
#include "phynet/job_runner.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "common/subprocess.h"
#include "phynet/job_file.h"
#include "phynet/job_report.h"

namespace nshim::phynet {
namespace {

using Clock = std::chrono::steady_clock;

// A child in its own process group, its output in a log; killed (the whole group) when dropped
// while still running. With `stopByStdin` (background flows) its stdin is a pipe this process
// holds open: stopping closes it first and gives the child a moment to end by itself, because a
// flow started through ssh never sees a signal sent to the local ssh (phynet_flow stops at the end
// of a piped stdin, which ssh passes on), and its final line would be lost.
class Child {
 public:
  Child(const std::vector<std::string>& args, const std::string& log, double delayMs, bool stopByStdin = false) {
    std::fflush(nullptr);
    int pipeFds[2] = {-1, -1};
    if (stopByStdin && pipe2(pipeFds, O_CLOEXEC) != 0) pipeFds[0] = pipeFds[1] = -1;
    pid_ = fork();
    if (pid_ != 0) {
      if (pipeFds[0] >= 0) close(pipeFds[0]);
      stdinWrite_ = pipeFds[1];
      return;
    }
    setpgid(0, 0);
    if (pipeFds[0] >= 0) dup2(pipeFds[0], STDIN_FILENO);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      dup2(fd, STDOUT_FILENO);
      dup2(fd, STDERR_FILENO);
    }
    if (delayMs > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(delayMs * 1e3)));
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    std::fprintf(stderr, "phynet --jobs: cannot start %s: %s\n", argv[0], std::strerror(errno));
    _exit(127);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { stop(); }

  bool started() const { return pid_ > 0; }
  // The exit status once it ended (-1 while it runs).
  int poll() {
    if (pid_ <= 0) return status_;
    int s = 0;
    if (waitpid(pid_, &s, WNOHANG) == pid_) {
      status_ = WIFEXITED(s) ? WEXITSTATUS(s) : 128 + WTERMSIG(s);
      pid_ = 0;
    }
    return status_;
  }
  void stop() {
    if (stdinWrite_ >= 0) {
      close(stdinWrite_);
      stdinWrite_ = -1;
      for (int i = 0; i < 150 && poll() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ <= 0) return;
    kill(-pid_, SIGTERM);
    kill(pid_, SIGTERM);
    for (int i = 0; i < 50 && poll() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (pid_ > 0) {
      kill(-pid_, SIGKILL);
      kill(pid_, SIGKILL);
      int s = 0;
      waitpid(pid_, &s, 0);
      status_ = 128 + SIGKILL;
      pid_ = 0;
    }
  }

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  int stdinWrite_ = -1;  // the write end of the child's stdin, with stopByStdin
};

double wallSeconds() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<double>(now.tv_sec) + now.tv_nsec * 1e-9;
}

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string lastLines(const std::string& text, int n) {
  size_t at = text.size();
  for (int i = 0; i <= n && at != std::string::npos && at > 0; ++i) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

std::vector<std::string> replayCommand(const JobFile& file, const JobSpec& job, const std::string& json,
                                       double startAt) {
  std::vector<std::string> args = file.launcher;
  std::string hostList;
  for (const std::string& h : job.hosts)
    hostList += fmt::format("{}{}:{}", hostList.empty() ? "" : ",", file.host(h)->address, job.ranksPerHost);
  std::string nics;
  for (const std::string& n : job.nics) nics += (nics.empty() ? "" : ",") + n;
  args.insert(args.end(), {"--host", hostList, "-np", std::to_string(job.hosts.size() * job.ranksPerHost)});
  if (!nics.empty()) args.insert(args.end(), {"-x", "NCCLSHIM_SOCKET_IFNAME=" + nics});
  if (startAt > 0) args.insert(args.end(), {"-x", fmt::format("NCCLSHIM_JOB_START_AT={:.3f}", startAt)});
  args.insert(args.end(),
              {executableDir() + "/phynet", "--timeout", fmt::format("{:g}", file.timeoutS), "--json", json});
  args.insert(args.end(), job.args.begin(), job.args.end());
  args.push_back(job.input);
  return args;
}

std::vector<std::string> onHost(const JobFile& file, const FabricHost& host, std::vector<std::string> command) {
  std::vector<std::string> args = file.exec;
  args.push_back(host.address);
  args.insert(args.end(), command.begin(), command.end());
  return args;
}

// Runs the children until all replays end or the timeout passes; returns false on the timeout.
bool waitForAll(std::vector<std::unique_ptr<Child>>& replays, double timeoutS) {
  Clock::time_point deadline = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(timeoutS * 1e3));
  for (;;) {
    bool running = false;
    for (auto& c : replays) running |= c->poll() < 0;
    if (!running) return true;
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct Options {
  std::string jobsPath;
  std::string outDir = "phynet-jobs";
};

int runJobsChecked(const Options& o) {
  Result<JobFile> parsed = readJobFile(o.jobsPath);
  if (!parsed.ok()) {
    std::fprintf(stderr, "phynet: %s\n", parsed.status().message().c_str());
    return 2;
  }
  const JobFile& file = *parsed;
  if (mkdir(o.outDir.c_str(), 0700) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "phynet: cannot make %s: %s\n", o.outDir.c_str(), std::strerror(errno));
    return 2;
  }
  std::vector<JobOutcome> outcomes(file.jobs.size());
  int rc = 0;
  auto collect = [&](size_t j, const char* phase, int status, JobFigures* into, bool* have) {
    std::string base = fmt::format("{}/{}.{}", o.outDir, file.jobs[j].name, phase);
    if (status != 0) {
      outcomes[j].note += fmt::format("{} run failed (exit {}): {}; log {}.log\n#   ", phase, status,
                                      lastLines(readText(base + ".log"), 2), base);
      rc = 1;
      return;
    }
    Result<JobFigures> f = jobFiguresFromJson(readText(base + ".json"), base + ".json");
    if (!f.ok()) {
      outcomes[j].note += f.status().message();
      rc = 1;
      return;
    }
    *into = *f;
    *have = true;
  };
  // Alone, one after the other, same placement.
  for (size_t j = 0; j < file.jobs.size(); ++j) {
    const JobSpec& job = file.jobs[j];
    outcomes[j].name = job.name;
    outcomes[j].background = job.kind == JobKind::kBackground;
    if (job.kind != JobKind::kReplay) continue;
    if (job.aloneTimeS > 0) {
      outcomes[j].haveAlone = true;
      outcomes[j].alone.endToEndS = outcomes[j].alone.opTimeUs = job.aloneTimeS;
      outcomes[j].alone.opTimeUs = job.aloneTimeS * 1e6;
      outcomes[j].alone.busbwGBps = job.aloneBusbwGBps;
      continue;
    }
    std::string base = fmt::format("{}/{}.alone", o.outDir, job.name);
    std::vector<std::unique_ptr<Child>> one;
    one.push_back(std::make_unique<Child>(replayCommand(file, job, base + ".json", 0), base + ".log", 0));
    bool inTime = waitForAll(one, file.timeoutS + 30);
    collect(j, "alone", inTime ? one[0]->poll() : 124, &outcomes[j].alone, &outcomes[j].haveAlone);
  }
  // Shared: sinks first, then every job at its offset from one start.
  std::vector<std::unique_ptr<Child>> sinks, flows, replays;
  std::vector<size_t> replayJob;
  for (const JobSpec& job : file.jobs) {
    if (job.kind != JobKind::kBackground) continue;
    const FabricHost& to = *file.host(job.hosts[1]);
    sinks.push_back(std::make_unique<Child>(onHost(file, to,
                                                   {executableDir() + "/phynet_flow", "sink", to.nics.at(job.nics[0]),
                                                    std::to_string(job.port ? job.port : 47000), job.transport}),
                                            fmt::format("{}/{}.sink.log", o.outDir, job.name), 0, true));
  }
  if (!sinks.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // The replays start at one wall-clock time, far enough ahead for every mpirun to launch and connect.
  double startAt = wallSeconds() + file.launchS;
  for (size_t j = 0; j < file.jobs.size(); ++j) {
    const JobSpec& job = file.jobs[j];
    if (job.kind == JobKind::kBackground) {
      const FabricHost& from = *file.host(job.hosts[0]);
      const FabricHost& to = *file.host(job.hosts[1]);
      flows.push_back(std::make_unique<Child>(
          onHost(file, from,
                 {executableDir() + "/phynet_flow", "send", from.nics.at(job.nics[0]),
                  fmt::format("{}:{}", to.nics.at(job.nics[0]), job.port ? job.port : 47000),
                  fmt::format("{:g}", job.rateMbit), fmt::format("{:g}", job.onMs), fmt::format("{:g}", job.offMs),
                  fmt::format("{:g}", job.seconds), job.transport, fmt::format("{:.3f}", startAt + job.startMs / 1e3)}),
          // Launched now: it connects (an RDMA flow also opens its device and QP, seconds in a slow VM)
          // before the shared start, and waits for it as the replays do.
          fmt::format("{}/{}.send.log", o.outDir, job.name), 0, true));
      outcomes[j].note = fmt::format(
          "{} -> {} over {} ({}): {:g} Mbit/s{}", job.hosts[0], job.hosts[1], job.nics[0], job.transport, job.rateMbit,
          job.offMs > 0 ? fmt::format(", {:g} ms on / {:g} ms off", job.onMs, job.offMs) : "");
      continue;
    }
    std::string base = fmt::format("{}/{}.shared", o.outDir, job.name);
    replays.push_back(std::make_unique<Child>(replayCommand(file, job, base + ".json", startAt + job.startMs / 1e3),
                                              base + ".log", 0));
    replayJob.push_back(j);
  }
  bool inTime = waitForAll(replays, file.timeoutS + 30);
  for (size_t k = 0; k < replays.size(); ++k) {
    int status = replays[k]->poll();
    collect(replayJob[k], "shared", inTime || status >= 0 ? status : 124, &outcomes[replayJob[k]].shared,
            &outcomes[replayJob[k]].haveShared);
  }
  replays.clear();
  flows.clear();
  sinks.clear();
  std::string report = combinedReport(outcomes);
  std::fputs(report.c_str(), stdout);
  std::string path = o.outDir + "/combined.txt";
  std::ofstream(path) << report;
  return rc;
}

}  // namespace

bool wantsJobs(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--jobs") == 0 || std::strncmp(argv[i], "--jobs=", 7) == 0) return true;
  return false;
}

int runJobs(const std::string& jobsPath, const std::string& outDir) {
  return runJobsChecked(Options{jobsPath, outDir});
}

}  // namespace nshim::phynet
