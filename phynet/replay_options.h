// The command line of phynet: what to replay, how (transport, pacing, filters, repetitions) and
// where the report goes, read through common/command_line.h (the options: replay_command_line.h).
// Parsing never exits or prints: it returns the options or an error, and the help text is a
// separate string, so main decides what rank 0 prints.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/nccl_protocol.h"
#include "common/status.h"
#include "model/algorithm.h"
#include "phynet/workload_names.h"
#include "workload/input_format.h"
#include "workload/workload_options.h"

namespace nshim::phynet {

enum class Pace { kFast, kRecorded };

struct ReplayOptions {
  std::string input;  // trace directory / trace file / SimAI .txt / AICB .csv / Chakra / PyTorch ET
  InputFormat format = InputFormat::kAuto;
  std::string commGroupFile;      // --comm-group: Chakra's process groups (ASTRA-sim's JSON)
  std::string transport = "tcp";  // tcp | ibverbs
  std::string ifname;             // NCCLSHIM_SOCKET_IFNAME: socket interface(s), one per local rank
  std::string hca;                // NCCLSHIM_IB_HCA: RDMA device(s), one per local rank
  // net: every hop over --transport; shm: hops within a node over shared memory; auto: shm when the
  // ranks span several hosts or --gpus-per-node is given (and each node is on one host), else net
  std::string intraNode = "auto";
  // --algo: the allreduce algorithm for every op; kAuto: NCCL's recorded choice where the trace
  // has it, else NCCLSHIM_ALGO, else the ring.
  Algorithm algorithm = Algorithm::kAuto;
  // --proto: NCCL's protocol for every collective; kAuto: NCCL's recorded choice where the trace has
  // it, else NCCLSHIM_PROTO or NCCL_PROTO, else Simple.
  Protocol protocol = Protocol::kAuto;
  bool pxn = false;     // --pxn: alltoall through the node-mate on the destination's rail
  std::string ncclLog;  // --nccl-log: the NCCL log the tuner's system is read from ("": the default)
  int gpusPerNode = 0;  // ranks per node (consecutive global ranks); 0: the ranks of one host
  Pace pace = Pace::kFast;
  int iterations = 1;  // the whole workload is replayed this many times
  int warmup = 0;      // extra iterations first, not reported
  double scale = 1.0;  // every message size is multiplied by this
  int resizeDp = 0;    // --resize dp=N: a trace replayed at data-parallel size N (0: as captured)
  int resizeEp = 0;    // --resize ep=N: at expert-parallel size N as well (0: as captured)
  // --delay RANK[,RANK...]:MICROSECONDS[:EVERY]: these global ranks wait this long before every
  // EVERY-th of their operations (a slow GPU or host), so that a report shows what a straggler does.
  std::vector<int> delayRanks;
  double delayMicroseconds = 0;
  int delayEvery = 1;
  std::vector<std::string> ops;                   // op filter ("allreduce", "sendrecv", ...); empty = all
  std::vector<std::string> groups;                // communicator label filter ("tp", "dp", ...); empty = all
  uint64_t maxBufferBytes = uint64_t{256} << 20;  // --max-buffer: per arena side without --verify
  bool maxBufferGiven = false;                    // the default may be lowered to fit the hosts' memory
  // --staging SIZE|whole: the memory behind each buffer without --verify (ReplayConfig::stagingBytes);
  // -1: NCCL's, 2 x NCCL_BUFFSIZE (a connection's staging on each of NCCL's usual 2 channels).
  int64_t stagingBytes = -1;
  double timeoutSeconds = 120;                // every wait of the replay (transport, MPI phases)
  std::string csvPath;                        // --report
  std::string jsonPath;                       // --json
  std::string htmlPath;                       // --html: the HTML page of the report (html_report.h)
  double rateGBps = 0;                        // link rate for the efficiency column; 0 = none
  int maxRows = 40;                           // per-op rows printed on stdout (all go to the CSV/JSON)
  int worldSize = 0, tp = 0, ep = 0, pp = 0;  // layout for SimAI / AICB inputs
  int cp = 0;                 // --cp: a trace's context-parallel size under --resize, where its shape is ambiguous
  SimAiRules simaiRules;      // --simai-rules (SimAI inputs)
  bool verify = false;        // patterned data, every received byte checked (data_check.h)
  bool gpuWorkOnCpu = false;  // --gpu-work: reductions and local copies without --verify too
  std::string jobsPath;       // --jobs FILE.toml: several jobs at once (job_runner.h)
  std::string jobsOutDir = "phynet-jobs";  // --out DIR beside --jobs
  bool help = false;
  bool verbose = false;
  bool checkOnly = false;  // --check: stop before the first connection
};

// Parses argv (argv[0] is skipped). Values are checked (ranges, known names); an error is the one
// line to print. --jobs takes only --out beside it.
Result<ReplayOptions> parseReplayOptions(int argc, char** argv);

// The --help text (generated from the options).
std::string replayUsage();

// The format of `options.input`: --format, else detected (workload/input_format.h).
Result<InputFormat> resolveFormat(const ReplayOptions& options);

// Canonical op name for a filter word ("all_reduce" -> "allreduce", "p2p"/"send"/"recv" ->
// "sendrecv"); "" when unknown.
std::string canonicalOpFilter(const std::string& word);

}  // namespace nshim::phynet
