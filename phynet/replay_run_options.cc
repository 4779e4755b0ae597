// phynet's options of how the workload runs and where the results go (replay_command_line.h).
#include "common/command_line.h"
#include "phynet/option_values.h"
#include "phynet/replay_command_line.h"

namespace nshim::phynet {

void addRunOptions(CLI::App& app, ReplayOptions* o) {
  addValueOption(
      app, "--pace", "fast|recorded",
      [o](const std::string& v) {
        if (v == "fast") o->pace = Pace::kFast;
        else if (v == "recorded") o->pace = Pace::kRecorded;
        else refuseValue(fmt::format("--pace: '{}' (fast or recorded)", v));
      },
      "issue as fast as possible (default), or keep the recorded gaps (a gap\n"
      "longer than --timeout is refused before any op is replayed); on a\n"
      "GPU-timed trace, the job's timeline: each op its recorded offset after\n"
      "the rank's previous op started, communicators overlapping as in the job,\n"
      "scored against the capture (docs/replay_time.md)")
      ->group("replay");
  addValueOption(
      app, "--iterations", "N", [o](const std::string& v) { o->iterations = parseInt("--iterations", v, 1, 1 << 24); },
      "replay the whole workload N times (default 1)")
      ->group("replay");
  addValueOption(
      app, "--warmup", "N", [o](const std::string& v) { o->warmup = parseInt("--warmup", v, 0, 1 << 20); },
      "N more iterations first, left out of the report (default 0)")
      ->group("replay");
  addValueOption(
      app, "--scale", "X", [o](const std::string& v) { o->scale = parseNumber("--scale", v, 1e-9, 1e6); },
      "multiply every message size by X")
      ->group("replay");
  addValueOption(
      app, "--delay", "R[,R...]:US[:N]", [o](const std::string& v) { parseDelay(v, o); },
      "ranks R wait US microseconds before every (N-th) operation (a straggler);\n"
      "the report names the rank the others waited for and how long")
      ->group("replay");
  addValueOption(
      app, "--resize", "dp=N[,ep=M]",
      [o](const std::string& v) {
        for (const std::string& word : splitList(v)) {  // dp=N, ep=N or both
          const bool dp = word.rfind("dp=", 0) == 0;
          if (!dp && word.rfind("ep=", 0) != 0) refuseValue(fmt::format("--resize: '{}' (dp=N, ep=N or dp=N,ep=N)", v));
          (dp ? o->resizeDp : o->resizeEp) = parseInt("--resize", word.substr(3), 1, 1 << 20);
        }
      },
      "replay an ncclshim trace at data-parallel size N (larger or smaller),\n"
      "and / or expert-parallel size M (ep=M alone keeps DP), by the rules of\n"
      "`ncclshim scale` (docs/scale.md); mpirun -np is the new size")
      ->group("replay");
  // Each --ops adds to the list (the only option that does).
  app.add_option_function<std::vector<std::string>>(
         "--ops",
         [o](const std::vector<std::string>& lists) {
           o->ops.clear();
           for (const std::string& list : lists) {
             for (const std::string& word : splitList(list)) {
               std::string canonical = canonicalOpFilter(word);
               if (canonical.empty()) refuseValue(fmt::format("--ops: unknown op '{}'", word));
               o->ops.push_back(canonical);
             }
           }
         },
         "only these ops: allreduce,allgather,reducescatter,broadcast,reduce,\n"
         "alltoall,gather,scatter,sendrecv")
      ->option_text("LIST")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->group("replay");
  addValueOption(
      app, "--groups", "LIST", [o](const std::string& v) { o->groups = splitList(v); },
      "only communicators with these labels: world,tp,dp,pp,ep,dp_ep,comm<N>")
      ->group("replay");
  addValueOption(
      app, "--max-buffer", "SIZE",
      [o](const std::string& v) {
        o->maxBufferBytes =
            static_cast<uint64_t>(parseSize("--max-buffer", v, "a size of at least 4K, like 64M or 1G"));
        o->maxBufferGiven = true;
      },
      "cap on each of a communicator's two buffers per rank (default 256M,\n"
      "lowered, and said, where a host's ranks would need over 3/4 of its\n"
      "available memory): a larger op runs as pieces within it, the same bytes\n"
      "on the wire; not with --verify, which needs whole buffers (phynet then\n"
      "checks the hosts' memory before any traffic and names the --scale that fits)")
      ->group("replay");
  addValueOption(
      app, "--staging", "SIZE|whole",
      [o](const std::string& v) {
        o->stagingBytes = v == "whole" ? 0 : parseSize("--staging", v, "a size of at least 4K, like 8M, or 'whole'");
      },
      "memory behind each of those buffers without --verify (default 2 x\n"
      "NCCL_BUFFSIZE = 8M): mapped over and over the buffer, so that the socket\n"
      "copies touch as much memory as NCCL's proxy does (its staging slots, not\n"
      "the op's buffers); 'whole': real buffers (docs/socket_transport.md)")
      ->group("replay");
  app.add_flag("--check", o->checkOnly,
               "load, validate, place the ranks and check the hosts' memory, then stop:\n"
               "no connection, no traffic (a workload's check before a long replay)")
      ->group("replay");
  addValueOption(
      app, "--timeout", "S", [o](const std::string& v) { o->timeoutSeconds = parseNumber("--timeout", v, 0.1, 1e6); },
      "deadline of every wait; a dead peer ends the run naming it (default 120)")
      ->group("replay");
  app.add_flag("--verify", o->verify,
               "move a known pattern and check every received byte (same sizes; elements\n"
               "as uint8, reductions as wrapping sums); a wrong byte ends the run naming it")
      ->group("replay");
  app.add_flag("--gpu-work", o->gpuWorkOnCpu,
               "do NCCL's GPU work on the CPU too: the reductions as data arrives and a\n"
               "rank's copy of its own block (always with --verify); by default a replay\n"
               "leaves it out: NCCL's proxy, which is what the wire sees, only moves bytes")
      ->group("replay");
}

void addJobAndReportOptions(CLI::App& app, ReplayOptions* o) {
  const char* jobs = "several jobs (run without mpirun: phynet launches one mpirun per job; docs/fabric.md)";
  CLI::Option* jobFile = addValueOption(
                             app, "--jobs", "FILE.toml", [o](const std::string& v) { o->jobsPath = v; },
                             "the jobs of a job file at once on one fabric, each alone first;\n"
                             "per job time, busbw and slowdown, bytes per host pair and NIC")
                             ->group(jobs);
  addValueOption(
      app, "--out", "DIR", [o](const std::string& v) { o->jobsOutDir = v; },
      "where --jobs writes each job's logs and reports (default phynet-jobs)")
      ->group(jobs)
      ->needs(jobFile);
  addValueOption(
      app, "--report", "FILE.csv", [o](const std::string& v) { o->csvPath = v; },
      "one row per operation (and per iteration)")
      ->group("report");
  addValueOption(
      app, "--json", "FILE.json", [o](const std::string& v) { o->jsonPath = v; },
      "operations, summary and per-rank counts as JSON")
      ->group("report");
  addValueOption(
      app, "--html", "FILE.html", [o](const std::string& v) { o->htmlPath = v; },
      "the report as one self-contained HTML page with charts (as ncclshim\n"
      "report on the JSON; needs Python 3 with matplotlib)")
      ->group("report");
  addValueOption(
      app, "--rate", "GBPS", [o](const std::string& v) { o->rateGBps = parseNumber("--rate", v, 0, 1e6); },
      "link rate for the efficiency column (busbw / rate), GB/s")
      ->group("report");
  addValueOption(
      app, "--rows", "N", [o](const std::string& v) { o->maxRows = parseInt("--rows", v, 0, 1 << 30); },
      "per-operation rows printed on stdout (default 40; all go to files)")
      ->group("report");
  app.add_flag("--verbose", o->verbose, "bootstrap and per-rank details on stderr")->group("report");
}

}  // namespace nshim::phynet
