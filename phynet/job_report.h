// The combined report of `phynet --jobs`: what each job's phynet --json report says (time, busbw,
// bytes per host pair and per NIC), read back from those files, and the text that sets each job's
// run alone beside its run shared with the others.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace nshim::phynet {

struct JobFigures {
  double endToEndS = 0;  // the replay's end_to_end_s
  double opTimeUs = 0;   // the sum of its ops' times
  double busbwGBps = 0;  // its ops' busbw, weighted by their time
  int ops = 0;
  std::map<std::string, std::pair<uint64_t, uint64_t>> pairBytes;  // "from -> to" -> (bytes, model)
  std::map<std::string, std::pair<uint64_t, uint64_t>> nicBytes;   // "host nic" -> (sent, received)
};

// Reads the figures from the text of a phynet --json report; errors name the file.
Result<JobFigures> jobFiguresFromJson(const std::string& text, const std::string& path);

struct JobOutcome {
  std::string name;
  bool background = false;
  std::string note;  // how a background flow ran, or why a replay failed
  bool haveAlone = false, haveShared = false;
  JobFigures alone, shared;
};

// One section per job, then the combined one (bytes of each job per host pair and NIC).
std::string combinedReport(const std::vector<JobOutcome>& jobs);

}  // namespace nshim::phynet
