// The job file of `phynet --jobs FILE` (TOML, read with toml++): the hosts of a shared fabric, how
// to launch onto them, and the jobs that run on it at once: replays (a trace or workload on given
// hosts, ranks per host and NICs, from a start offset) and background flows (constant-rate or on/off
// TCP between two hosts). Every error names the file, the line and the key. docs/fabric.md.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace nshim::phynet {

struct FabricHost {
  std::string name;
  std::string address;                      // what mpirun and the exec agent are given
  std::map<std::string, std::string> nics;  // NIC name -> its address on the fabric
};

enum class JobKind { kReplay, kBackground };

struct JobSpec {
  std::string name;
  JobKind kind = JobKind::kReplay;
  int line = 0;                    // where the job starts in the file, for messages
  double startMs = 0;              // offset from the shared start
  std::vector<std::string> hosts;  // names from [hosts]
  std::vector<std::string> nics;   // the NICs its ranks use (replay) / the sender's NIC (background)
  // kReplay
  std::string input;  // trace folder or workload file
  int ranksPerHost = 1;
  std::vector<std::string> args;  // more phynet arguments
  double aloneTimeS = 0;          // given "alone" figures (0: measure them)
  double aloneBusbwGBps = 0;
  // kBackground: hosts[0] sends to hosts[1]
  double rateMbit = 0;
  double onMs = 0, offMs = 0;  // offMs 0: constant rate
  double seconds = 0;          // how long it runs (0: until the replays end)
  int port = 0;
};

struct JobFile {
  std::string path;
  std::vector<std::string> launcher;  // mpirun and its options, before --host/-np
  std::vector<std::string> exec;      // runs a command on a host: exec + [host address] + command
  double timeoutS = 120;
  double launchS = 3;      // how long ahead of the shared start the jobs are launched
  bool shareNics = false;  // may two jobs use one host's NIC
  std::vector<FabricHost> hosts;
  std::vector<JobSpec> jobs;
  const FabricHost* host(const std::string& name) const;
};

Result<JobFile> parseJobFile(const std::string& text, const std::string& path);
Result<JobFile> readJobFile(const std::string& path);

}  // namespace nshim::phynet
