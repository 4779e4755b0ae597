// Reading phynet's --json reports back for `phynet --jobs` and writing the combined report
// (job_report.h). The --json writer puts each op row, NIC and host pair on a line of its own; those
// lines are scanned for the few numbers the combined report needs.
#include "phynet/job_report.h"

#include <cstdlib>
#include <sstream>

namespace nshim::phynet {
namespace {

// The value after `"key":` at or after `from` in `line` (npos when absent).
size_t valueAt(const std::string& line, std::string_view key, size_t from = 0) {
  size_t at = line.find(fmt::format("\"{}\":", key), from);
  return at == std::string::npos ? at : at + key.size() + 3;
}

bool number(const std::string& line, std::string_view key, double* out, size_t from = 0) {
  size_t at = valueAt(line, key, from);
  if (at == std::string::npos) return false;
  char* end = nullptr;
  *out = std::strtod(line.c_str() + at, &end);
  return end != line.c_str() + at;
}

bool text(const std::string& line, std::string_view key, std::string* out) {
  size_t at = valueAt(line, key);
  if (at == std::string::npos || line[at] != '"') return false;
  size_t end = line.find('"', at + 1);
  if (end == std::string::npos) return false;
  *out = line.substr(at + 1, end - at - 1);
  return true;
}

}  // namespace

Result<JobFigures> jobFiguresFromJson(const std::string& json, const std::string& path) {
  JobFigures f;
  std::istringstream in(json);
  std::string line;
  bool sawHeader = false;
  double weighted = 0;
  while (std::getline(in, line)) {
    if (line.rfind("{\"description\"", 0) == 0) sawHeader = number(line, "end_to_end_s", &f.endToEndS);
    if (line.rfind("{\"op\":", 0) == 0 && valueAt(line, "seq") != std::string::npos) {
      double time = 0, busbw = 0;
      if (!number(line, "time_us", &time) || !number(line, "busbw_gbps", &busbw))
        return NS_ERROR(Code::kInvalidArgument, "{}: an op row without time_us or busbw_gbps", path);
      f.opTimeUs += time;
      weighted += busbw * time;
      ++f.ops;
    }
    if (line.rfind("{\"from\":", 0) == 0) {
      std::string from, to;
      double bytes = 0, model = 0;
      if (text(line, "from", &from) && text(line, "to", &to) && from != to && number(line, "bytes", &bytes) &&
          number(line, "model_bytes", &model))
        f.pairBytes[from + " -> " + to] = {static_cast<uint64_t>(bytes), static_cast<uint64_t>(model)};
    }
    if (line.rfind("{\"host\":", 0) == 0 && valueAt(line, "nic") != std::string::npos) {
      std::string host, nic;
      double sent = 0, received = 0;
      size_t s = valueAt(line, "sent"), r = valueAt(line, "received");
      if (text(line, "host", &host) && text(line, "nic", &nic) && s != std::string::npos && r != std::string::npos &&
          number(line, "bytes", &sent, s) && number(line, "bytes", &received, r))
        f.nicBytes[host + " " + nic] = {static_cast<uint64_t>(sent), static_cast<uint64_t>(received)};
    }
  }
  if (!sawHeader) return NS_ERROR(Code::kInvalidArgument, "{}: not a phynet --json report (no end_to_end_s)", path);
  f.busbwGBps = f.opTimeUs > 0 ? weighted / f.opTimeUs : 0;
  return f;
}

std::string combinedReport(const std::vector<JobOutcome>& jobs) {
  std::string out;
  for (const JobOutcome& j : jobs) {
    out += fmt::format("# job {}{}\n", j.name, j.background ? " (background flow)" : "");
    if (!j.note.empty()) out += fmt::format("#   {}\n", j.note);
    if (j.background) continue;
    auto row = [&](const char* what, bool have, const JobFigures& f) {
      if (!have) return fmt::format("#   {:<7} -\n", what);
      return fmt::format("#   {:<7} time {:>10.3f} ms  op time {:>10.3f} ms  busbw {:>8.4f} GB/s  ({} ops)\n", what,
                         f.endToEndS * 1e3, f.opTimeUs / 1e3, f.busbwGBps, f.ops);
    };
    out += row("alone", j.haveAlone, j.alone);
    out += row("shared", j.haveShared, j.shared);
    if (j.haveAlone && j.haveShared && j.shared.opTimeUs > 0 && j.alone.opTimeUs > 0)
      out += fmt::format("#   slowdown {:.3f}x (op time shared / alone), busbw {:.3f}x\n",
                         j.shared.opTimeUs / j.alone.opTimeUs,
                         j.alone.busbwGBps > 0 ? j.shared.busbwGBps / j.alone.busbwGBps : 0.0);
  }
  out +=
      "# combined: bytes of each job (shared run) per host pair (payload / model) and per host NIC (sent / received)\n";
  for (const JobOutcome& j : jobs) {
    if (!j.haveShared) continue;
    for (const auto& [pair, b] : j.shared.pairBytes)
      out += fmt::format("  pair {:<28} job {:<16} {:>14} {:>14}\n", pair, j.name, b.first, b.second);
  }
  for (const JobOutcome& j : jobs) {
    if (!j.haveShared) continue;
    for (const auto& [nic, b] : j.shared.nicBytes)
      out += fmt::format("  nic  {:<28} job {:<16} {:>14} {:>14}\n", nic, j.name, b.first, b.second);
  }
  return out;
}

}  // namespace nshim::phynet
