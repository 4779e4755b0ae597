// Text, CSV and JSON writers of the workload and report distributions.
#include "tools/inspect/distribution_output.h"

#include "tools/inspect/output_file.h"
#include "trace/trace_validate.h"
#include "workload/size_bucket.h"

namespace nshim::tools {
namespace {

std::string memberList(const std::vector<int>& members, const char* separator) {
  std::string out;
  for (size_t i = 0; i < members.size(); ++i) out += fmt::format("{}{}", i ? separator : "", members[i]);
  return out;
}

// 1536 -> "1.5 KiB": the human-readable companion of an exact byte count.
std::string humanBytes(uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 5) {
    value /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", value, units[unit]);
}

}  // namespace

std::string membersText(const std::vector<int>& members) {
  if (members.size() <= 8) return memberList(members, ",");
  return fmt::format("{},{},{},...,{} ({} ranks)", members[0], members[1], members[2], members.back(), members.size());
}

void printWorkloadText(FILE* out, const std::string& source, const WorkloadDistribution& d) {
  fmt::print(out, "# communication distribution of {}\n# {}\n", source, d.description);
  fmt::print(out, "# {} ranks, {} calls, {} bytes ({}), {} wire bytes under ring algorithms ({})\n", d.worldSize,
             d.calls, d.bytes, humanBytes(d.bytes), d.wireBytes, humanBytes(d.wireBytes));
  for (const std::string& line : d.shapeLines) fmt::print(out, "# {}\n", line);
  fmt::print(out,
             "#\n# by op, group and message size (calls of all ranks; bytes: nccl-tests size; wire: payload "
             "sent, ring)\n");
  fmt::print(out, "  {:<13} {:<8} {:>5} {:>7} {:>9} {:>16} {:>16}\n", "op", "group", "ranks", "size<=", "calls",
             "bytes", "wire_bytes");
  for (const DistributionRow& r : d.rows) {
    fmt::print(out, "  {:<13} {:<8} {:>5} {:>7} {:>9} {:>16} {:>16}\n", r.op, r.group, r.nranks,
               workload::bucketName(r.bucket), r.calls, r.bytes, r.wireBytes);
  }
  fmt::print(out, "  {:<13} {:<8} {:>5} {:>7} {:>9} {:>16} {:>16}\n", "total", "", "", "", d.calls, d.bytes,
             d.wireBytes);
  fmt::print(out, "#\n# per communicator\n");
  fmt::print(out, "  {:<18} {:<8} {:>5} {:>9} {:>16} {:>16}  {}\n", "comm", "group", "ranks", "calls", "bytes",
             "wire_bytes", "members (global ranks)");
  for (const CommSummary& c : d.comms) {
    fmt::print(out, "  {:<18} {:<8} {:>5} {:>9} {:>16} {:>16}  {}\n", trace::commIdText(c.id), c.group,
               c.members.size(), c.calls, c.bytes, c.wireBytes, membersText(c.members));
  }
  fmt::print(out, "#\n# per rank\n  {:>5} {:>9} {:>16} {:>16}\n", "rank", "calls", "bytes", "wire_bytes");
  for (const RankSummary& r : d.ranks) {
    fmt::print(out, "  {:>5} {:>9} {:>16} {:>16}\n", r.rank, r.calls, r.bytes, r.wireBytes);
  }
}

void printWorkloadCsv(FILE* out, const WorkloadDistribution& d, SummaryTable table) {
  switch (table) {
    case SummaryTable::kDistribution:
      fmt::print(out, "op,group,nranks,size_bucket,size_name,calls,bytes,wire_bytes\n");
      for (const DistributionRow& r : d.rows) {
        fmt::print(out, "{},{},{},{},{},{},{},{}\n", r.op, csvField(r.group), r.nranks, r.bucket,
                   workload::bucketName(r.bucket), r.calls, r.bytes, r.wireBytes);
      }
      break;
    case SummaryTable::kComms:
      fmt::print(out, "comm,group,nranks,members,calls,bytes,wire_bytes\n");
      for (const CommSummary& c : d.comms) {
        fmt::print(out, "{},{},{},{},{},{},{}\n", trace::commIdText(c.id), csvField(c.group), c.members.size(),
                   memberList(c.members, " "), c.calls, c.bytes, c.wireBytes);
      }
      break;
    case SummaryTable::kRanks:
      fmt::print(out, "rank,calls,bytes,wire_bytes\n");
      for (const RankSummary& r : d.ranks) fmt::print(out, "{},{},{},{}\n", r.rank, r.calls, r.bytes, r.wireBytes);
      break;
    case SummaryTable::kDecisions:  // from the trace itself (decision_mix.h), not the workload
      break;
  }
}

void printWorkloadJson(FILE* out, const std::string& source, const std::string& kind, const WorkloadDistribution& d) {
  fmt::print(out,
             "{{\"input\":{},\"kind\":{},\"description\":{},\"world_size\":{},\n\"totals\":{{\"calls\":{},"
             "\"bytes\":{},\"wire_bytes\":{}}},\n\"distribution\":[",
             jsonString(source), jsonString(kind), jsonString(d.description), d.worldSize, d.calls, d.bytes,
             d.wireBytes);
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const DistributionRow& r = d.rows[i];
    fmt::print(out,
               "{}\n{{\"op\":{},\"group\":{},\"nranks\":{},\"size_bucket\":{},\"calls\":{},\"bytes\":{},"
               "\"wire_bytes\":{}}}",
               i ? "," : "", jsonString(r.op), jsonString(r.group), r.nranks, r.bucket, r.calls, r.bytes, r.wireBytes);
  }
  fmt::print(out, "],\n\"comms\":[");
  for (size_t i = 0; i < d.comms.size(); ++i) {
    const CommSummary& c = d.comms[i];
    fmt::print(out,
               "{}\n{{\"comm\":{},\"group\":{},\"nranks\":{},\"members\":[{}],\"calls\":{},\"bytes\":{},"
               "\"wire_bytes\":{}}}",
               i ? "," : "", jsonString(trace::commIdText(c.id)), jsonString(c.group), c.members.size(),
               memberList(c.members, ","), c.calls, c.bytes, c.wireBytes);
  }
  fmt::print(out, "],\n\"ranks\":[");
  for (size_t i = 0; i < d.ranks.size(); ++i) {
    const RankSummary& r = d.ranks[i];
    fmt::print(out, "{}\n{{\"rank\":{},\"calls\":{},\"bytes\":{},\"wire_bytes\":{}}}", i ? "," : "", r.rank, r.calls,
               r.bytes, r.wireBytes);
  }
  fmt::print(out, "]}}\n");
}

void printReportText(FILE* out, const std::string& source, const ReportDistribution& d) {
  fmt::print(out, "# replay report {}: {} op rows over {} measured iteration(s), {} bytes ({})\n", source, d.ops,
             d.iterations, d.bytes, humanBytes(d.bytes));
  fmt::print(out, "# Avg bus bandwidth: {:.3f} GB/s; time of all ops: {:.1f} us\n#\n", d.meanBusbw, d.totalTimeUs);
  fmt::print(out, "# by op, group and message size (times in us, bandwidths in GB/s)\n");
  fmt::print(out, "  {:<13} {:<8} {:>5} {:>7} {:>7} {:>14} {:>11} {:>11} {:>11} {:>10} {:>10} {:>10} {:>12}\n", "op",
             "group", "ranks", "size<=", "ops", "bytes", "mean_time", "min_time", "max_time", "algbw", "busbw",
             "max_busbw", "recorded");
  for (const ReportBucketRow& r : d.rows) {
    fmt::print(out,
               "  {:<13} {:<8} {:>5} {:>7} {:>7} {:>14} {:>11.1f} {:>11.1f} {:>11.1f} {:>10.3f} {:>10.3f} "
               "{:>10.3f} {:>12}\n",
               r.op, r.group, r.nranks, workload::bucketName(r.bucket), r.ops, r.bytes, r.meanTimeUs, r.minTimeUs,
               r.maxTimeUs, r.meanAlgbw, r.meanBusbw, r.maxBusbw,
               r.meanRecordedUs < 0 ? "-" : fmt::format("{:.1f}", r.meanRecordedUs));
  }
}

void printReportCsv(FILE* out, const ReportDistribution& d) {
  fmt::print(out,
             "op,group,nranks,size_bucket,size_name,ops,bytes,mean_time_us,min_time_us,max_time_us,"
             "mean_algbw_gbps,mean_busbw_gbps,max_busbw_gbps,mean_recorded_us\n");
  for (const ReportBucketRow& r : d.rows) {
    fmt::print(out, "{},{},{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.6g},{:.6g},{:.6g},{}\n", r.op, csvField(r.group),
               r.nranks, r.bucket, workload::bucketName(r.bucket), r.ops, r.bytes, r.meanTimeUs, r.minTimeUs,
               r.maxTimeUs, r.meanAlgbw, r.meanBusbw, r.maxBusbw, numberOr(r.meanRecordedUs, ""));
  }
}

void printReportJson(FILE* out, const std::string& source, const ReportDistribution& d) {
  fmt::print(out,
             "{{\"input\":{},\"kind\":\"report\",\"iterations\":{},\"totals\":{{\"ops\":{},\"bytes\":{},"
             "\"time_us\":{:.3f},\"mean_busbw_gbps\":{:.6g}}},\n\"distribution\":[",
             jsonString(source), d.iterations, d.ops, d.bytes, d.totalTimeUs, d.meanBusbw);
  for (size_t i = 0; i < d.rows.size(); ++i) {
    const ReportBucketRow& r = d.rows[i];
    fmt::print(out,
               "{}\n{{\"op\":{},\"group\":{},\"nranks\":{},\"size_bucket\":{},\"ops\":{},\"bytes\":{},"
               "\"mean_time_us\":{:.3f},\"min_time_us\":{:.3f},\"max_time_us\":{:.3f},\"mean_algbw_gbps\":{:.6g},"
               "\"mean_busbw_gbps\":{:.6g},\"max_busbw_gbps\":{:.6g},\"mean_recorded_us\":{}}}",
               i ? "," : "", jsonString(r.op), jsonString(r.group), r.nranks, r.bucket, r.ops, r.bytes, r.meanTimeUs,
               r.minTimeUs, r.maxTimeUs, r.meanAlgbw, r.meanBusbw, r.maxBusbw, numberOr(r.meanRecordedUs, "null"));
  }
  fmt::print(out, "]}}\n");
}

}  // namespace nshim::tools
