// Running the report page generator (page_generator.h).
#include "workload/page_generator.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/json_text.h"
#include "common/settings.h"
#include "common/subprocess.h"
#include "trace/trace_validate.h"

namespace nshim::workload {
namespace {

// $NCCLSHIM_REPORT_SCRIPT, else the installed copy next to the binary, else the source tree's.
std::string findGenerator() {
  if (settingIsSet(Setting::NCCLSHIM_REPORT_SCRIPT)) return settingString(Setting::NCCLSHIM_REPORT_SCRIPT);
  const std::string dir = executableDir();
  for (const std::string& candidate :
       {dir + "/ncclshim_report/report_main.py", dir + "/../tools/report/report_main.py"}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

Result<std::string> temporaryReportFile(const char* what) {
  char name[] = "/tmp/phynet-report-XXXXXX.json";
  int fd = mkstemps(name, 5);
  if (fd < 0) return NS_ERROR(Code::kSystemError, "{}: cannot create a temporary file in /tmp", what);
  close(fd);
  return std::string(name);
}

int runPageGenerator(const std::vector<std::string>& args, bool needMatplotlib, const char* who) {
  const std::string script = findGenerator();
  if (script.empty()) {
    std::fprintf(stderr,
                 "%s: report_main.py not found in ncclshim_report/ next to the binary nor in "
                 "../tools/report (set NCCLSHIM_REPORT_SCRIPT)\n",
                 who);
    return kPageBadInput;
  }
  const std::string python = findPython(needMatplotlib ? "matplotlib" : "json");
  if (python.empty()) {
    std::fprintf(stderr,
                 "%s: no Python 3%s here (Debian: apt-get install python3-matplotlib, or set "
                 "NCCLSHIM_PYTHON); nothing written\n",
                 who, needMatplotlib ? " with matplotlib" : "");
    return kPageNoMatplotlib;
  }
  std::vector<std::string> argv = {python, script};
  argv.insert(argv.end(), args.begin(), args.end());
  int rc = runProgram(argv, false);
  if (rc == 127) {
    std::fprintf(stderr, "%s: could not run %s %s\n", who, python.c_str(), script.c_str());
    return kPageBadInput;
  }
  return rc;
}

Status writeCommsJson(const std::string& path, const Workload& workload) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return NS_ERROR(Code::kSystemError, "{}: cannot create", path);
  fmt::print(f, "{{\"comms\":[");
  for (size_t i = 0; i < workload.comms.size(); ++i) {
    const CommGroup& c = workload.comms[i];
    std::string members;
    for (int m : c.members) members += fmt::format("{}{}", members.empty() ? "" : ",", m);
    fmt::print(f, "{}\n{{\"comm\":{},\"group\":{},\"nranks\":{},\"members\":[{}]}}", i ? "," : "",
               jsonQuoted(trace::commIdText(c.id)), jsonQuoted(c.label), c.members.size(), members);
  }
  fmt::print(f, "]}}\n");
  bool bad = std::ferror(f) != 0;
  bad |= std::fclose(f) != 0;
  if (bad) return NS_ERROR(Code::kSystemError, "{}: write failed", path);
  return Status::Ok();
}

}  // namespace nshim::workload
