// The HTML page of a replay (html_report.h).
#include "phynet/html_report.h"

#include <unistd.h>

namespace nshim::phynet {

Status writeHtmlReport(const std::string& htmlPath, const std::string& jsonPath, const ReplayReport& report,
                       const TextHeader& header, const Workload& workload) {
  std::vector<std::string> temporaries;
  auto removeTemporaries = [&temporaries] {
    for (const std::string& t : temporaries) unlink(t.c_str());
  };
  std::string json = jsonPath;
  Status status = Status::Ok();
  if (json.empty()) {
    Result<std::string> name = temporaryReportFile("--html");
    if (!name.ok()) return name.status();
    temporaries.push_back(json = *name);
    status = writeJsonReport(json, report, header);
  }
  Result<std::string> comms = temporaryReportFile("--html");
  if (status.ok() && comms.ok()) {
    temporaries.push_back(*comms);
    status = writeCommsJson(*comms, workload);
  }
  if (!status.ok() || !comms.ok()) {
    removeTemporaries();
    return status.ok() ? comms.status() : status;
  }
  int rc = runPageGenerator({"report", "--comms=" + *comms, "--output=" + htmlPath, "--", json}, true, "phynet --html");
  removeTemporaries();
  if (rc != 0)
    return NS_ERROR(Code::kInvalidArgument, "--html: {} not written (the page generator ended with {})", htmlPath, rc);
  return Status::Ok();
}

}  // namespace nshim::phynet
