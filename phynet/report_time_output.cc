// Writers of the time and settings parts of the report (report_time_output.h).
#include "phynet/report_time_output.h"

#include <algorithm>

#include "common/json_text.h"

namespace nshim::phynet {
namespace {

std::string ratioText(double replay, double capture) {
  return capture > 0 ? fmt::format("{:.2f}", replay / capture) : "-";
}

std::string figuresJson(const TimelineFigures& f) {
  return fmt::format(
      "{{\"comm_us\":{:.3f},\"exposed_us\":{:.3f},\"busy_us\":{:.3f},\"span_us\":{:.3f},\"idle_us\":{:.3f},"
      "\"overlap_pairs\":{},\"ops\":{}}}",
      f.commUs, f.exposedUs, f.busyUs, f.spanUs, f.idleUs, f.overlapPairs, f.ops);
}

std::string rankTimelineJson(const RankTimeline& t) {
  return fmt::format("{{\"rank\":{},{}\"capture\":{},\"replay\":{}}}", t.rank,
                     t.iteration >= 0 ? fmt::format("\"iteration\":{},", t.iteration) : std::string(),
                     figuresJson(t.capture), figuresJson(t.replay));
}

// "mean 1.02 (0.97-1.10)" of replay/capture over `rows` for one figure.
template <typename Figure>
std::string ratioSpread(const std::vector<RankTimeline>& rows, Figure figure) {
  double sum = 0, low = 0, high = 0;
  size_t n = 0;
  for (const RankTimeline& r : rows) {
    const double capture = figure(r.capture);
    if (capture <= 0) continue;
    const double ratio = figure(r.replay) / capture;
    low = n == 0 ? ratio : std::min(low, ratio);
    high = n == 0 ? ratio : std::max(high, ratio);
    sum += ratio;
    ++n;
  }
  return n == 0 ? "-" : fmt::format("mean {:.2f} ({:.2f}-{:.2f})", sum / static_cast<double>(n), low, high);
}

// "rank R: communication a -> b (ratio), exposed ..." for the first maxRows of `rows` (then how many
// more), with the overlapping op pairs when `pairs`.
void printRankTimelines(FILE* out, const std::vector<RankTimeline>& rows, int maxRows, bool pairs) {
  int shown = 0;
  for (const RankTimeline& k : rows) {
    if (shown++ >= maxRows) {
      fmt::print(out, "#   ... {} more ranks (all are in --json)\n", rows.size() - maxRows);
      break;
    }
    fmt::print(out, "#   rank {}: communication {:.1f} -> {:.1f} ({}), exposed {:.1f} -> {:.1f} ({}){}\n", k.rank,
               k.capture.commUs, k.replay.commUs, ratioText(k.replay.commUs, k.capture.commUs), k.capture.exposedUs,
               k.replay.exposedUs, ratioText(k.replay.exposedUs, k.capture.exposedUs),
               pairs ? fmt::format(", overlapping pairs {} -> {}", k.capture.overlapPairs, k.replay.overlapPairs)
                     : std::string());
  }
}

}  // namespace

void printNcclSettings(FILE* out, const ReplayReport& r) {
  if (r.ncclSettings.empty() && r.ncclNote.empty()) return;  // nothing set anywhere: nothing to say
  if (r.ncclSettings.empty()) {
    fmt::print(out,
               "# NCCL settings       : none set (neither the capture nor this environment sets a traffic-shaping "
               "NCCL_* variable)\n");
  } else {
    fmt::print(out, "# NCCL settings       : {} in force (where each came from; read = looked up by this replay)\n",
               r.ncclSettings.size());
    for (const NcclSettingInForce& s : r.ncclSettings) {
      std::string from;
      switch (s.source) {
        case NcclSource::kEnvironment: from = "from the environment"; break;
        case NcclSource::kCapture: from = "from the capture"; break;
        case NcclSource::kOverride: from = "from " + s.via + " (override)"; break;
        case NcclSource::kCaptureNotApplied: from = "from the capture, not applied: " + s.via; break;
      }
      if (!s.captured.empty()) from += fmt::format("; the capture had {}", s.captured);
      const char* used = s.source == NcclSource::kCaptureNotApplied ? ""
                         : s.read                                   ? ", read"
                                                                    : ", not read by this replay";
      fmt::print(out, "#   {}={}  {}{}\n", s.name, s.value, from, used);
    }
  }
  if (!r.ncclNote.empty()) fmt::print(out, "#   note: {}\n", r.ncclNote);
}

void printTimeline(FILE* out, const ReplayReport& r, int maxRows) {
  const TimelineScore& t = r.timeline;
  // Said where there is a timeline to score, or where --pace recorded asked for one; a workload
  // file or a CPU-timed trace replayed fast has none, and a line saying so is noise.
  if (t.note.empty() || (!t.captured && !t.paced)) return;
  fmt::print(out, "# job timeline        : {}\n", t.note);
  if (!t.captured) return;
  fmt::print(out,
             "#   per rank, capture -> replay: communication (us), exposed communication (us), overlapping op "
             "pairs\n");
  printRankTimelines(out, t.ranks, maxRows, true);
  if (!t.steady.empty()) {
    fmt::print(out,
               "#   from iteration 1 on (NCCL connects its channels inside its first calls; the replay before it "
               "starts):\n");
  }
  printRankTimelines(out, t.steady, maxRows, false);
  fmt::print(out,
             "# overlapping op pairs: capture {}, replay {:.0f} (ops of different communicators in flight at once "
             "on a rank, all ranks; replay: mean per pass)\n",
             t.captureOverlapPairs, t.replayOverlapPairs);
  if (t.iterations.empty()) {
    fmt::print(out,
               "# per iteration       : no training iterations found in the ranks' ops (the figures above are "
               "per whole pass)\n");
  } else {
    fmt::print(out, "# per iteration       : {} rank-iterations, replay / capture: communication {}, exposed {}\n",
               t.iterations.size(), ratioSpread(t.iterations, [](const TimelineFigures& f) { return f.commUs; }),
               ratioSpread(t.iterations, [](const TimelineFigures& f) { return f.exposedUs; }));
  }
}

std::string timeJson(const ReplayReport& r) {
  std::string out = ",\n\"nccl_settings\":[";
  for (size_t i = 0; i < r.ncclSettings.size(); ++i) {
    const NcclSettingInForce& s = r.ncclSettings[i];
    out +=
        fmt::format("{}{{\"name\":{},\"value\":{},\"source\":{},\"via\":{},\"captured\":{},\"read\":{}}}", i ? "," : "",
                    jsonQuoted(s.name), jsonQuoted(s.value), jsonQuoted(ncclSourceName(s.source)), jsonQuoted(s.via),
                    s.captured.empty() ? "null" : jsonQuoted(s.captured), s.read ? "true" : "false");
  }
  out += fmt::format("],\"nccl_settings_note\":{},\n", jsonQuoted(r.ncclNote));
  const TimelineScore& t = r.timeline;
  out += fmt::format(
      "\"timeline\":{{\"captured\":{},\"paced\":{},\"note\":{},\"capture_overlap_pairs\":{},"
      "\"replay_overlap_pairs\":{:.1f},\"ranks\":[",
      t.captured ? "true" : "false", t.paced ? "true" : "false", jsonQuoted(t.note), t.captureOverlapPairs,
      t.replayOverlapPairs);
  for (size_t i = 0; i < t.ranks.size(); ++i) out += (i ? "," : "") + rankTimelineJson(t.ranks[i]);
  out += "],\"iterations\":[";
  for (size_t i = 0; i < t.iterations.size(); ++i) out += (i ? "," : "") + rankTimelineJson(t.iterations[i]);
  out += "],\"steady\":[";
  for (size_t i = 0; i < t.steady.size(); ++i) out += (i ? "," : "") + rankTimelineJson(t.steady[i]);
  out += "]}";
  return out;
}

}  // namespace nshim::phynet
