// Running the report page generator (html_report.h).
#include "phynet/html_report.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/subprocess.h"

namespace nshim::phynet {
namespace {

// $NCCLSHIM_REPORT_SCRIPT, else the installed copy next to the binary, else the source tree's.
std::string findGenerator() {
  if (const char* env = std::getenv("NCCLSHIM_REPORT_SCRIPT")) return env;
  const std::string dir = executableDir();
  for (const std::string& candidate :
       {dir + "/ncclshim_report/report_main.py", dir + "/../tools/report/report_main.py"}) {
    if (access(candidate.c_str(), R_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace

int runPageGenerator(const std::vector<std::string>& args, bool needMatplotlib, const char* who) {
  const std::string script = findGenerator();
  if (script.empty()) {
    std::fprintf(stderr, "%s: report_main.py not found in ncclshim_report/ next to the binary nor in "
                 "../tools/report (set NCCLSHIM_REPORT_SCRIPT)\n", who);
    return kPageBadInput;
  }
  const std::string python = findPython(needMatplotlib ? "matplotlib" : "json");
  if (python.empty()) {
    std::fprintf(stderr, "%s: no Python 3%s here (Debian: apt-get install python3-matplotlib, or set "
                 "NCCLSHIM_PYTHON); nothing written\n", who, needMatplotlib ? " with matplotlib" : "");
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

Status writeHtmlReport(const std::string& htmlPath, const std::string& jsonPath, const ReplayReport& report,
                       const TextHeader& header) {
  std::string json = jsonPath, temporary;
  if (json.empty()) {
    char name[] = "/tmp/phynet-report-XXXXXX.json";
    int fd = mkstemps(name, 5);
    if (fd < 0) return NS_ERROR(Code::kSystemError, "--html: cannot create a temporary file in /tmp");
    close(fd);
    temporary = json = name;
    Status written = writeJsonReport(json, report, header);
    if (!written.ok()) {
      unlink(name);
      return written;
    }
  }
  int rc = runPageGenerator({"report", json, "-o", htmlPath}, true, "phynet --html");
  if (!temporary.empty()) unlink(temporary.c_str());
  if (rc != 0) return NS_ERROR(Code::kInvalidArgument, "--html: {} not written (the page generator ended with {})",
                               htmlPath, rc);
  return Status::Ok();
}

}  // namespace nshim::phynet
