// Report writers. Unknown values print as "-" in the text table and as empty CSV fields / JSON null.
#include "phynet/report_output.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/rank_ranges.h"
#include "phynet/host_traffic_output.h"
#include "phynet/memory_plan.h"
#include "phynet/rank_messages.h"
#include "phynet/report_time_output.h"
#include "trace/trace_validate.h"

namespace nshim::phynet {
namespace {

struct FileCloser {
  void operator()(FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<FILE, FileCloser>;

Result<File> openForWrite(const std::string& path) {
  File file(std::fopen(path.c_str(), "w"));
  if (!file) return NS_ERROR(Code::kSystemError, "{}: cannot create: {}", path, std::strerror(errno));
  return file;
}

Status closeChecked(File file, const std::string& path) {
  bool bad = std::ferror(file.get()) != 0;
  bad |= std::fclose(file.release()) != 0;
  if (bad) return NS_ERROR(Code::kSystemError, "{}: write failed: {}", path, std::strerror(errno));
  return Status::Ok();
}

std::string known(double value, const char* format) {
  return value < 0 ? "-" : fmt::format(fmt::runtime(format), value);
}

// "tree/2", "ring/1/ll": the algorithm, its channels where it has them, and the protocol unless Simple.
std::string algorithmText(const OpRow& row) {
  std::string text = row.channels > 0 ? fmt::format("{}/{}", row.algorithm, row.channels) : row.algorithm;
  if (!row.protocol.empty() && row.protocol != "simple") text += "/" + row.protocol;
  return text;
}

std::string csvNumber(double value) { return value < 0 ? "" : fmt::format("{:.6g}", value); }
std::string jsonNumber(double value) { return value < 0 ? "null" : fmt::format("{:.6g}", value); }

}  // namespace

namespace {

std::string commText(uint64_t id) { return trace::commIdText(id); }

}  // namespace

// What the "recorded" column is, and whether the ratio divides by it.
void printRecordedClock(FILE* out, RecordedClock clock) {
  const char* what = "";
  switch (clock) {
    case RecordedClock::kGpu:
      what = "NCCL's GPU time of each call (the trace was GPU-timed); ratio = replay / recorded";
      break;
    case RecordedClock::kCpuCall:
      what =
          "the CPU time of each call (an enqueue, not the op's duration: the capture was not GPU-timed); "
          "no ratio (capture with NCCLSHIM_GPU_TIMING=1 to compare)";
      break;
    case RecordedClock::kMixed:
      what = "GPU time for some calls, CPU call time for others (GPU timing was partial); no ratio";
      break;
    case RecordedClock::kFile: what = "the time the workload file states; ratio = replay / recorded"; break;
    case RecordedClock::kNone: return;
  }
  fmt::print(out, "# recorded time      : {}\n", what);
}

// The ops far slower than their like (slow_ops.h): a fault or a burst of traffic, with the hosts
// their members sit on.
void printSlowOps(FILE* out, const ReplayReport& r, int maxRows) {
  if (r.slowOps.empty()) {
    fmt::print(out, "# slow operations    : none over {:g}x its class's median (op, group, size)\n", kSlowFactor);
    return;
  }
  fmt::print(out, "# slow operations    : {} over {:g}x its class's median (op, group, size), slowest first\n",
             r.slowOps.size(), kSlowFactor);
  int shown = 0;
  for (const SlowOp& s : r.slowOps) {
    if (shown++ >= std::min(maxRows, 10)) {
      fmt::print(out, "#   ... {} more (all are in --json)\n", r.slowOps.size() - static_cast<size_t>(shown - 1));
      break;
    }
    const OpRow& row = r.rows[s.row];
    fmt::print(out, "#   {} {} {} iteration {} seq {}: {:.1f} us, {:.1f}x the median {:.1f} us{}\n", row.op, row.label,
               bucketName(workload::sizeBucket(row.bytes)), row.iteration, row.seq, row.timeUs, s.factor, s.medianUs,
               s.hosts.empty() ? "" : "; hosts " + s.hosts);
  }
}

// Waiting for a late rank against moving data (report.h Straggler).
void printStraggler(FILE* out, const Straggler& s) {
  if (s.waitingOps == 0) {
    fmt::print(out, "# waiting for ranks  : no operation waited over 5 % of its time for a late rank\n");
  } else if (s.rank < 0) {
    fmt::print(out,
               "# waiting for ranks  : up to {} operations of a rank waited over 5 % of their time for a late "
               "member; no rank was the late one in 90 % of those it took part in\n",
               s.waitingOps);
  } else {
    fmt::print(
        out,
        "# waiting for ranks  : rank {} started last in {} of the {} operations it took part in that "
        "waited over 5 % of their time (a straggler): the others waited {:.3f} ms per operation for it, {:.3f} ms "
        "in all\n",
        s.rank, s.lastIn, s.waitingOps, s.waitUs * 1e-3 / static_cast<double>(s.lastIn), s.waitUs * 1e-3);
  }
}

// The time per training iteration (step_times.h): count, mean, min, max and the first ten.
void printStepTimes(FILE* out, const StepTimes& steps) {
  if (steps.timesUs.empty()) {
    if (!steps.note.empty()) fmt::print(out, "# training iterations : none timed ({})\n", steps.note);
    return;
  }
  const std::vector<double>& t = steps.timesUs;
  double sum = 0;
  for (double us : t) sum += us;
  fmt::print(out,
             "# training iterations : {} per pass ({} calls each on rank 0{}, found in the trace): time (ms) "
             "mean {:.3f}, min {:.3f}, max {:.3f}\n",
             steps.perPass, steps.callsPerIteration,
             steps.warmupCalls ? fmt::format(", after {} warm-up calls", steps.warmupCalls) : std::string(),
             sum / static_cast<double>(t.size()) * 1e-3, *std::min_element(t.begin(), t.end()) * 1e-3,
             *std::max_element(t.begin(), t.end()) * 1e-3);
  std::string first;
  for (size_t i = 0; i < t.size() && i < 10; ++i) first += fmt::format(" {:.3f}", t[i] * 1e-3);
  fmt::print(out, "#   per iteration (ms):{}{}\n", first, t.size() > 10 ? " ..." : "");
}

// When timing started (after every rank was ready) and the memory the ranks used, in two lines that
// stay two lines at any world size (the JSON has every rank's figures).
static void printStartAndMemory(FILE* out, const ReplayReport& r) {
  if (r.ranks.empty()) return;
  int64_t firstReady = r.ranks[0].readyNs, lastReady = firstReady;
  size_t peakRank = 0, plannedRank = 0;
  uint64_t lowestPeak = r.ranks[0].peakRssBytes;
  for (size_t g = 0; g < r.ranks.size(); ++g) {
    const RankCounters& c = r.ranks[g];
    firstReady = std::min(firstReady, c.readyNs);
    lastReady = std::max(lastReady, c.readyNs);
    if (c.peakRssBytes > r.ranks[peakRank].peakRssBytes) peakRank = g;
    if (c.plannedBufferBytes > r.ranks[plannedRank].plannedBufferBytes) plannedRank = g;
    lowestPeak = std::min(lowestPeak, c.peakRssBytes);
  }
  fmt::print(out,
             "# timing starts       : together on all ranks, after every rank's connections were made and its "
             "buffers allocated (ranks became ready over {:.1f} ms); set-up is not in any operation's time\n",
             (lastReady - firstReady) * 1e-6);
  fmt::print(out,
             "# memory per rank     : peak RSS {} (rank {}), lowest {}; replay buffers planned {} at most "
             "(rank {})\n",
             memoryText(r.ranks[peakRank].peakRssBytes), peakRank, memoryText(lowestPeak),
             memoryText(r.ranks[plannedRank].plannedBufferBytes), plannedRank);
}

void printReport(FILE* out, const ReplayReport& r, const TextHeader& h, int maxRows) {
  fmt::print(out, "# phynet replay: {}\n", r.description);
  fmt::print(out, "# world {} ranks, transport {}, pace {}, iterations {} (+{} warmup), scale {:g}, rate {}\n",
             r.worldSize, h.transport, h.pace, r.iterations, r.warmup, h.scale,
             r.rateGBps > 0 ? fmt::format("{:g} GB/s", r.rateGBps) : "-");
  fmt::print(out, "# GPU work (reductions, local copies): {}\n",
             h.gpuWork ? "done on the CPU as data arrives"
                       : "left out, as NCCL's proxy leaves it to its GPUs (--gpu-work does it)");
  fmt::print(out,
             "#\n# {:<13} {:<6} {:<18} {:>5} {:>4} {:>6} {:>11} {:<9} {:>12} {:<12} {:>10} {:>8} {:>8} {:>6} "
             "{:>10} {:>6}  {}\n",
             "op", "group", "comm", "ranks", "iter", "seq", "count", "type", "bytes", "algo", "time(us)", "algbw",
             "busbw", "eff(%)", "recorded", "ratio", "peers");
  int shown = 0;
  for (const OpRow& row : r.rows) {
    if (shown++ >= maxRows) break;
    fmt::print(out,
               "  {:<13} {:<6} {:<18} {:>5} {:>4} {:>6} {:>11} {:<9} {:>12} {:<12} {:>10.1f} {:>8.3f} {:>8.3f} "
               "{:>6} {:>10} {:>6}  {}\n",
               row.op, row.label, commText(row.commId), row.nranks, row.iteration, row.seq, row.count,
               dataTypeName(row.type), row.bytes, algorithmText(row), row.timeUs, row.algbw, row.busbw,
               known(row.efficiency, "{:.1f}"), known(row.recordedUs, "{:.1f}"), known(row.ratio, "{:.2f}"), row.ranks);
  }
  if (r.rows.size() > static_cast<size_t>(maxRows)) {
    fmt::print(out, "#  ... {} more operation rows (all are in --report / --json)\n", r.rows.size() - maxRows);
  }
  fmt::print(out, "#\n# summary by op, group and size (algbw/busbw in GB/s)\n");
  fmt::print(out, "# {:<13} {:<6} {:>7} {:>7} {:>14} {:>14} {:>11} {:>11} {:>14}\n", "op", "group", "size<=", "count",
             "total_bytes", "mean_time(us)", "mean_busbw", "mean_eff(%)", "recorded(us)");
  double busbwSum = 0;
  for (const SummaryRow& s : r.summary) {
    fmt::print(out, "  {:<13} {:<6} {:>7} {:>7} {:>14} {:>14.1f} {:>11.3f} {:>11} {:>14}\n", s.op, s.label,
               bucketName(s.bucketBytes), s.count, s.totalBytes, s.meanTimeUs, s.meanBusbw,
               known(s.meanEfficiency, "{:.1f}"), known(s.meanRecordedUs, "{:.1f}"));
  }
  for (const OpRow& row : r.rows) busbwSum += row.busbw;
  fmt::print(out, "#\n# Avg bus bandwidth    : {:.3f} GB/s over {} operations\n",
             r.rows.empty() ? 0.0 : busbwSum / static_cast<double>(r.rows.size()), r.rows.size());
  fmt::print(out, "# end-to-end time     : {:.6f} s ({} measured iteration{})\n", r.endToEndSeconds, r.iterations,
             r.iterations == 1 ? "" : "s");
  printRecordedClock(out, r.recordedClock);
  printStepTimes(out, r.steps);
  printStraggler(out, r.straggler);
  printSlowOps(out, r, maxRows);
  printTimeline(out, r, maxRows);
  printNcclSettings(out, r);
  printStartAndMemory(out, r);
  fmt::print(out,
             "# per-rank counts (all iterations; wire = transport payload bytes, model = the algorithms' "
             "formula)\n");
  // Ranks whose counts are equal share one line, "# ranks 0-3,6: ..." ("# rank N: ..." alone; the
  // JSON has every rank). wire_zero_copy last: scripts read the fields before it by position.
  uint64_t verified = 0;
  std::vector<std::string> counts;
  for (const RankCounters& c : r.ranks) {
    counts.push_back(fmt::format("ops {} op_bytes {} wire_sent {} wire_received {} model_sent {}{} wire_zero_copy {}",
                                 c.ops, c.opBytes, c.wireSent, c.wireReceived, c.modelSent,
                                 h.verified ? fmt::format(" verified_bytes {}", c.bytesVerified) : std::string(),
                                 c.wireZeroCopy));
    verified += c.bytesVerified;
  }
  for (const std::vector<int>& ranks : ranksWithEqualText(counts)) {
    fmt::print(out, "# {}: {}\n",
               ranks.size() == 1 ? fmt::format("rank {}", ranks[0]) : "ranks " + rankRangesText(ranks),
               counts[ranks[0]]);
  }
  printHostTraffic(out, r, maxRows);
  if (h.verified) {
    fmt::print(out, "# data check          : every result byte verified ({} bytes over all ranks, 0 wrong)\n",
               verified);
  }
  std::fflush(out);
}

Status writeCsvReport(const std::string& path, const ReplayReport& r) {
  NS_ASSIGN_OR_RETURN(File file, openForWrite(path));
  FILE* f = file.get();
  fmt::print(f,
             "op,group,comm,nranks,iteration,seq,count,type,bytes,peers,algorithm,channels,start_us,time_us,"
             "algbw_gbps,busbw_gbps,efficiency_pct,recorded_us,ratio,protocol\n");
  for (const OpRow& row : r.rows) {
    fmt::print(f, "{},{},{},{},{},{},{},{},{},{},{},{},{:.3f},{:.3f},{:.6g},{:.6g},{},{},{},{}\n", row.op, row.label,
               commText(row.commId), row.nranks, row.iteration, row.seq, row.count, dataTypeName(row.type), row.bytes,
               row.ranks, row.algorithm, row.channels, row.startUs, row.timeUs, row.algbw, row.busbw,
               csvNumber(row.efficiency), csvNumber(row.recordedUs), csvNumber(row.ratio), row.protocol);
  }
  return closeChecked(std::move(file), path);
}

Status writeJsonReport(const std::string& path, const ReplayReport& r, const TextHeader& h) {
  NS_ASSIGN_OR_RETURN(File file, openForWrite(path));
  FILE* f = file.get();
  fmt::print(
      f,
      "{{\"description\":{},\"world_size\":{},\"transport\":{},\"pace\":{},\"iterations\":{},\"warmup\":{},"
      "\"scale\":{:g},\"rate_gbps\":{},\"end_to_end_s\":{:.9f},\"recorded_clock\":{},\"gpu_work\":{},\n\"ranks\":[",
      jsonQuoted(r.description), r.worldSize, jsonQuoted(h.transport), jsonQuoted(h.pace), r.iterations, r.warmup,
      h.scale, r.rateGBps > 0 ? fmt::format("{:g}", r.rateGBps) : "null", r.endToEndSeconds,
      jsonQuoted(recordedClockName(r.recordedClock)), h.gpuWork ? "\"cpu\"" : "\"left_out\"");
  for (size_t g = 0; g < r.ranks.size(); ++g) {
    const RankCounters& c = r.ranks[g];
    fmt::print(f,
               "{}{{\"rank\":{},\"ops\":{},\"op_bytes\":{},\"wire_sent\":{},\"wire_received\":{},\"model_sent\":{},"
               "\"wire_zero_copy\":{},\"ready_ns\":{},\"run_start_ns\":{},\"planned_buffer_bytes\":{},"
               "\"peak_rss_bytes\":{}{}{}}}",
               g ? "," : "", g, c.ops, c.opBytes, c.wireSent, c.wireReceived, c.modelSent, c.wireZeroCopy, c.readyNs,
               c.runStartNs, c.plannedBufferBytes, c.peakRssBytes,
               h.verified ? fmt::format(",\"verified_bytes\":{}", c.bytesVerified) : std::string(),
               rankEndpointJson(r, static_cast<int>(g)));
  }
  fmt::print(f,
             "]{}{},\n\"training_iterations\":{{\"per_pass\":{},\"calls\":{},\"warmup_calls\":{},\"note\":{},"
             "\"time_us\":[",
             hostTrafficJson(r), timeJson(r), r.steps.perPass, r.steps.callsPerIteration, r.steps.warmupCalls,
             jsonQuoted(r.steps.note));
  for (size_t i = 0; i < r.steps.timesUs.size(); ++i) fmt::print(f, "{}{:.3f}", i ? "," : "", r.steps.timesUs[i]);
  fmt::print(f,
             "]}},\n\"straggler\":{{\"rank\":{},\"last_in\":{},\"waiting_ops\":{},\"wait_us\":{:.3f}}},"
             "\n\"slow_ops\":[",
             r.straggler.rank, r.straggler.lastIn, r.straggler.waitingOps, r.straggler.waitUs);
  for (size_t i = 0; i < r.slowOps.size(); ++i) {
    const SlowOp& s = r.slowOps[i];
    const OpRow& row = r.rows[s.row];
    // "group" first: a slow op is not an op row to readers that scan for {"op": lines (job_report.cc)
    fmt::print(f,
               "{}\n{{\"group\":{},\"op\":{},\"iteration\":{},\"seq\":{},\"bytes\":{},\"time_us\":{:.3f},"
               "\"median_us\":{:.3f},\"factor\":{:.2f},\"hosts\":{}}}",
               i ? "," : "", jsonQuoted(row.label), jsonQuoted(row.op), row.iteration, row.seq, row.bytes, row.timeUs,
               s.medianUs, s.factor, jsonQuoted(s.hosts));
  }
  fmt::print(f, "],\n\"summary\":[");
  for (size_t i = 0; i < r.summary.size(); ++i) {
    const SummaryRow& s = r.summary[i];
    fmt::print(
        f,
        "{}\n{{\"op\":{},\"group\":{},\"size_bucket\":{},\"count\":{},\"total_bytes\":{},\"mean_time_us\":{:.3f},"
        "\"mean_busbw_gbps\":{:.6g},\"mean_efficiency_pct\":{},\"mean_recorded_us\":{}}}",
        i ? "," : "", jsonQuoted(s.op), jsonQuoted(s.label), s.bucketBytes, s.count, s.totalBytes, s.meanTimeUs,
        s.meanBusbw, jsonNumber(s.meanEfficiency), jsonNumber(s.meanRecordedUs));
  }
  fmt::print(f, "],\n\"ops\":[");
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const OpRow& row = r.rows[i];
    fmt::print(f,
               "{}\n{{\"op\":{},\"group\":{},\"comm\":{},\"nranks\":{},\"iteration\":{},\"seq\":{},\"count\":{},"
               "\"type\":{},\"bytes\":{},\"peers\":{},\"algorithm\":{},\"channels\":{},\"protocol\":{},\"start_us\":{:."
               "3f},\"time_us\":{:.3f},\"algbw_gbps\":{:.6g},"
               "\"busbw_gbps\":{:.6g},\"efficiency_pct\":{},\"recorded_us\":{},\"ratio\":{},\"wait_us\":{:.3f},"
               "\"move_us\":{:.3f},\"last_rank\":{},\"recorded_start_us\":{}}}",
               i ? "," : "", jsonQuoted(row.op), jsonQuoted(row.label), jsonQuoted(commText(row.commId)), row.nranks,
               row.iteration, row.seq, row.count, jsonQuoted(dataTypeName(row.type)), row.bytes, jsonQuoted(row.ranks),
               jsonQuoted(row.algorithm), row.channels, jsonQuoted(row.protocol), row.startUs, row.timeUs, row.algbw,
               row.busbw, jsonNumber(row.efficiency), jsonNumber(row.recordedUs), jsonNumber(row.ratio), row.waitUs,
               row.moveUs, row.lastRank, jsonNumber(row.recordedStartUs));
  }
  fmt::print(f, "]}}\n");
  return closeChecked(std::move(file), path);
}

}  // namespace nshim::phynet
