// Command-line parsing of phynet: "--name value" or "--name=value", one positional input path.
#include "phynet/replay_options.h"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "common/env.h"

namespace nshim::phynet {
namespace {

std::vector<std::string> splitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string word = text.substr(start, comma - start);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (!word.empty()) out.push_back(word);
    start = comma + 1;
  }
  return out;
}

Status parseNumber(const std::string& name, const std::string& text, double low, double high, double* out) {
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno != 0 || !(value >= low && value <= high)) {
    return Status(Code::kInvalidArgument, fmt::format("{}: '{}' is not a number in [{}, {}]", name, text, low, high));
  }
  *out = value;
  return Status::Ok();
}

Status parseInt(const std::string& name, const std::string& text, int low, int high, int* out) {
  double value = 0;
  NS_RETURN_IF_ERROR(parseNumber(name, text, low, high, &value));
  if (value != static_cast<double>(static_cast<int>(value))) {
    return Status(Code::kInvalidArgument, fmt::format("{}: '{}' is not an integer", name, text));
  }
  *out = static_cast<int>(value);
  return Status::Ok();
}

// RANK[,RANK...]:MICROSECONDS[:EVERY]
Status parseDelay(const std::string& value, ReplayOptions* o) {
  const size_t colon = value.find(':');
  if (colon == std::string::npos) {
    return Status(Code::kInvalidArgument, fmt::format("--delay: '{}' (RANK[,RANK...]:MICROSECONDS[:EVERY])", value));
  }
  o->delayRanks.clear();
  for (const std::string& word : splitList(value.substr(0, colon))) {
    int rank = 0;
    NS_RETURN_IF_ERROR(parseInt("--delay rank", word, 0, 1 << 24, &rank));
    o->delayRanks.push_back(rank);
  }
  if (o->delayRanks.empty()) return Status(Code::kInvalidArgument, fmt::format("--delay: '{}' names no rank", value));
  const std::string rest = value.substr(colon + 1);
  const size_t second = rest.find(':');
  NS_RETURN_IF_ERROR(parseNumber("--delay microseconds", rest.substr(0, second), 1, 60e6, &o->delayMicroseconds));
  o->delayEvery = 1;
  if (second != std::string::npos) {
    NS_RETURN_IF_ERROR(parseInt("--delay every", rest.substr(second + 1), 1, 1 << 30, &o->delayEvery));
  }
  return Status::Ok();
}

}  // namespace

std::string canonicalOpFilter(const std::string& word) {
  std::string w;
  for (char c : word) {
    if (c != '_' && c != '-') w += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* name :
       {"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "gather", "scatter"}) {
    if (w == name) return name;
  }
  if (w == "sendrecv" || w == "p2p" || w == "send" || w == "recv") return "sendrecv";
  return "";
}

Result<ReplayOptions> parseReplayOptions(int argc, char** argv) {
  ReplayOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0 || arg == "--") {
      if (!o.input.empty()) {
        return Status(Code::kInvalidArgument, fmt::format("two inputs given: '{}' and '{}'", o.input, arg));
      }
      o.input = arg;
      continue;
    }
    std::string name = arg, value;
    bool hasValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      hasValue = true;
    }
    if (name == "--help" || name == "-h") {
      o.help = true;
      continue;
    }
    if (name == "--html") {  // the page (html_report.h); kept apart from the list below
      if (!hasValue && i + 1 >= argc) return Status(Code::kInvalidArgument, "--html needs a value");
      o.htmlPath = hasValue ? value : argv[++i];
      continue;
    }
    if (name == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (name == "--check") {
      o.checkOnly = true;
      continue;
    }
    if (name == "--verify") {
      o.verify = true;
      continue;
    }
    if (name == "--pxn") {
      o.pxn = true;
      continue;
    }
    static const char* const kValued[] = {
        "--transport",  "--ifname",      "--hca",        "--pace",          "--format", "--iterations", "--warmup",
        "--scale",      "--resize",      "--delay",      "--ops",           "--groups", "--timeout",    "--report",
        "--json",       "--rate",        "--rows",       "--world-size",    "--tp",     "--ep",         "--pp",
        "--max-buffer", "--simai-rules", "--intra-node", "--gpus-per-node", "--algo",   "--proto",      "--nccl-log",
        "--comm-group", "--staging"};
    if (std::find(std::begin(kValued), std::end(kValued), name) == std::end(kValued)) {
      return Status(Code::kInvalidArgument, fmt::format("unknown option {}", name));
    }
    if (!hasValue) {
      if (i + 1 >= argc) return Status(Code::kInvalidArgument, fmt::format("{} needs a value", name));
      value = argv[++i];
    }
    if (name == "--transport") {
      if (value != "tcp" && value != "ibverbs") {
        return Status(Code::kInvalidArgument, fmt::format("--transport: '{}' (tcp or ibverbs)", value));
      }
      o.transport = value;
    } else if (name == "--ifname") {
      o.ifname = value;
    } else if (name == "--intra-node") {
      if (value != "net" && value != "shm" && value != "auto") {
        return Status(Code::kInvalidArgument, fmt::format("--intra-node: '{}' (auto, net or shm)", value));
      }
      o.intraNode = value;
    } else if (name == "--algo") {
      if (!parseAlgorithm(value, &o.algorithm)) {
        return Status(Code::kInvalidArgument, fmt::format("--algo: '{}' (auto, ring, tree or pat)", value));
      }
    } else if (name == "--nccl-log") {
      o.ncclLog = value;
    } else if (name == "--proto") {
      if (!parseProtocol(value, &o.protocol)) {
        return Status(Code::kInvalidArgument, fmt::format("--proto: '{}' (auto, simple, ll or ll128)", value));
      }
    } else if (name == "--gpus-per-node") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 16, &o.gpusPerNode));
    } else if (name == "--hca") {
      o.hca = value;
    } else if (name == "--pace") {
      if (value == "fast") o.pace = Pace::kFast;
      else if (value == "recorded") o.pace = Pace::kRecorded;
      else return Status(Code::kInvalidArgument, fmt::format("--pace: '{}' (fast or recorded)", value));
    } else if (name == "--format") {
      if (!parseInputFormat(value, &o.format)) {
        return Status(Code::kInvalidArgument, fmt::format("--format: '{}' ({})", value, inputFormatChoices()));
      }
    } else if (name == "--comm-group") {
      o.commGroupFile = value;
    } else if (name == "--iterations") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 24, &o.iterations));
    } else if (name == "--warmup") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 0, 1 << 20, &o.warmup));
    } else if (name == "--scale") {
      NS_RETURN_IF_ERROR(parseNumber(name, value, 1e-9, 1e6, &o.scale));
    } else if (name == "--resize") {
      if (value.rfind("dp=", 0) != 0) {
        return Status(Code::kInvalidArgument, fmt::format("--resize: '{}' (dp=N)", value));
      }
      NS_RETURN_IF_ERROR(parseInt(name, value.substr(3), 1, 1 << 20, &o.resizeDp));
    } else if (name == "--delay") {
      NS_RETURN_IF_ERROR(parseDelay(value, &o));
    } else if (name == "--ops") {
      for (const std::string& word : splitList(value)) {
        std::string canonical = canonicalOpFilter(word);
        if (canonical.empty()) return Status(Code::kInvalidArgument, fmt::format("--ops: unknown op '{}'", word));
        o.ops.push_back(canonical);
      }
    } else if (name == "--groups") {
      o.groups = splitList(value);
    } else if (name == "--max-buffer") {
      const int64_t bytes = parseBytes(value);
      if (bytes < 4096) {
        return Status(Code::kInvalidArgument,
                      fmt::format("--max-buffer: '{}' (a size of at least 4K, like 64M or 1G)", value));
      }
      o.maxBufferBytes = static_cast<uint64_t>(bytes);
      o.maxBufferGiven = true;
    } else if (name == "--staging") {
      const int64_t bytes = value == "whole" ? 0 : parseBytes(value);
      if (bytes != 0 && bytes < 4096) {
        return Status(Code::kInvalidArgument,
                      fmt::format("--staging: '{}' (a size of at least 4K, like 8M, or 'whole')", value));
      }
      o.stagingBytes = bytes;
    } else if (name == "--timeout") {
      NS_RETURN_IF_ERROR(parseNumber(name, value, 0.1, 1e6, &o.timeoutSeconds));
    } else if (name == "--report") {
      o.csvPath = value;
    } else if (name == "--json") {
      o.jsonPath = value;
    } else if (name == "--rate") {
      NS_RETURN_IF_ERROR(parseNumber(name, value, 0, 1e6, &o.rateGBps));
    } else if (name == "--rows") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 0, 1 << 30, &o.maxRows));
    } else if (name == "--world-size") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.worldSize));
    } else if (name == "--tp") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.tp));
    } else if (name == "--ep") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.ep));
    } else if (name == "--pp") {
      NS_RETURN_IF_ERROR(parseInt(name, value, 1, 1 << 20, &o.pp));
    } else if (name == "--simai-rules") {
      std::string error;
      if (!parseSimAiRules(value, &o.simaiRules, &error)) {
        return Status(Code::kInvalidArgument, "--simai-rules: " + error);
      }
    }
  }
  if (o.input.empty() && !o.help) {
    return Status(
        Code::kInvalidArgument,
        "no input: give a trace directory, a SimAI .txt, an AICB .csv, a Chakra trace or PyTorch execution traces");
  }
  return o;
}

Result<InputFormat> resolveFormat(const ReplayOptions& options) {
  if (options.format != InputFormat::kAuto) return options.format;
  return detectInputFormat(options.input);
}

std::string replayUsage() {
  return R"(usage: mpirun -np N phynet [options] <trace dir | SimAI .txt | AICB .csv | Chakra ET | PyTorch ET>

Replays the communication of a training job (an ncclshim trace, a SimAI / AICB workload expanded
over the TP/EP/DP/PP layout, a Chakra execution trace or PyTorch execution traces) as real network
traffic, with NCCL's ordering: one executor per communicator, per-rank issue order kept,
communicators concurrent. MPI is used only to launch, bootstrap and gather the report; data goes
over the chosen transport.

input
  --format auto|trace|simai|aicb|chakra|pytorch-et
                            input kind (auto: told by content: docs/foreign_formats.md)
  --comm-group FILE         Chakra: ASTRA-sim's comm-group JSON naming the nodes' pg_name groups
                            (default: comm_group.json beside the .et files, else the whole world)
  --world-size N --tp N --ep N --pp N   layout for SimAI/AICB (default: from the file; world = MPI size;
                            a SimAI file's groups larger than the world are cut to it, as SimAI-Phy's)
  --simai-rules LIST        the rules to follow, exactly those listed (all; none; or a list of);
                            default SimAI's own: min-fwd-4096 (HYBRID_TRANSFORMER_FWD_IN_BCKWD forward
                            ops below 4096 B raised to 4096 B), micro-first-layer (MICRO: the first
                            layer only), no-broadcast (BROADCAST ops replay nothing); not SimAI's, off
                            by default: pp-per-microbatch (vpp*ga pp_comm transfers each way per stage
                            boundary, as the real job; SimAI sends none)
replay
  --transport tcp|ibverbs   data transport (default tcp)
  --ifname LIST             socket interface(s), as NCCLSHIM_SOCKET_IFNAME (e.g. eth0, lo): the TCP
                            transport's data and the bootstrap of both; a list (r0,r1) gives local
                            rank i entry i mod length (one NIC per rank, as on GPU hosts)
  --hca LIST                RDMA device(s) for ibverbs, as NCCLSHIM_IB_HCA (rxe0, mlx5_0:1); a list
                            gives local rank i entry i mod length
  --intra-node auto|net|shm shm: hops between ranks of one node over shared memory (NCCL's NVLink:
                            that traffic never reaches a NIC), only hops between nodes over
                            --transport; net: every hop over --transport; auto (default): shm when
                            the ranks span several hosts or --gpus-per-node is given (each node on
                            one host), net when every rank is on one host
  --gpus-per-node G         a node is G consecutive global ranks, as launchers place them (with
                            --intra-node shm they must share a host); default: the ranks of one host
  --algo auto|ring|tree|pat algorithm, like NCCL_ALGO: ring; tree: NCCL's double binary tree
                            allreduce between nodes with a chain inside each (NCCLSHIM_NCHANNELS
                            channels, default 2, alternate between its two trees); pat: NCCL's PAT
                            allgather / reducescatter (binomial trees over distances 2^d; only with
                            one rank per node, as NCCL, else the ring). auto (default): what NCCL
                            chose for the call where the trace recorded it (its profiler plugin,
                            NCCLSHIM_PROFILER=1), else NCCLSHIM_ALGO or NCCL_ALGO, else what NCCL's
                            tuner picks for the size and the layout (see --nccl-log).
                            Each channel's messages travel on their own connection
  --proto auto|simple|ll|ll128
                            NCCL's protocol for every collective, like NCCL_PROTO: each message goes
                            on the wire in NCCL's format (LL: each 4-byte word with a 4-byte flag,
                            twice the payload; LL128: 120 payload bytes per 128-byte line), checked
                            and decoded at the receiver. auto (default): NCCL's recorded choice per
                            call, else NCCLSHIM_PROTO or NCCL_PROTO, else what NCCL's tuner picks
                            (see --nccl-log). Point-to-point moves as simple
  --pxn                     NCCL's PXN: a block for another node goes over the node (shared
                            memory) to the node-mate on the destination's rail, which sends it on
                            its own NIC, so each NIC carries only its rail (NCCLSHIM_PXN=1): for
                            alltoall, gather and scatter, and for a trace's own send/recv through a
                            relay thread per rank that forwards on its own (as NCCL's proxy), so
                            the node-mate need not be in the batch. The report counts a forward
                            with the relay; the model with the sender (host totals agree)
  --nccl-log FILE           the system NCCL's tuner sees, from rank 0's log of the real job
                            (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH: its ring and tree graph
                            lines and coll channels), for the calls a trace did not record and for
                            SimAI / AICB workloads. Default: what NCCL 2.28.9 described for a node
                            of NVLink GPUs and one 10 Gb/s NIC (1 channel of 1.2 GB/s per graph,
                            2 collective channels): give your cluster's log for its choices
  --pace fast|recorded      issue as fast as possible (default), or keep the recorded gaps (a gap
                            longer than --timeout is refused before any op is replayed); on a
                            GPU-timed trace, the job's timeline: each op its recorded offset after
                            the rank's previous op started, communicators overlapping as in the job,
                            scored against the capture (docs/replay_time.md)
  --iterations N            replay the whole workload N times (default 1)
  --warmup N                N more iterations first, left out of the report (default 0)
  --scale X                 multiply every message size by X
  --delay R[,R...]:US[:N]   ranks R wait US microseconds before every (N-th) operation (a straggler);
                            the report names the rank the others waited for and how long
  --resize dp=N             replay an ncclshim trace at data-parallel size N (larger or smaller),
                            by the rules of `ncclshim scale` (docs/scale.md); mpirun -np is the new size
  --ops LIST                only these ops: allreduce,allgather,reducescatter,broadcast,reduce,
                            alltoall,gather,scatter,sendrecv
  --groups LIST             only communicators with these labels: world,tp,dp,pp,ep,dp_ep,comm<N>
  --max-buffer SIZE         cap on each of a communicator's two buffers per rank (default 256M,
                            lowered, and said, where a host's ranks would need over 3/4 of its
                            available memory): a larger op runs as pieces within it, the same bytes
                            on the wire; not with --verify, which needs whole buffers (phynet then
                            checks the hosts' memory before any traffic and names the --scale that fits)
  --staging SIZE|whole      memory behind each of those buffers without --verify (default 2 x
                            NCCL_BUFFSIZE = 8M): mapped over and over the buffer, so that the socket
                            copies touch as much memory as NCCL's proxy does (its staging slots, not
                            the op's buffers); 'whole': real buffers (docs/socket_transport.md)
  --check                   load, validate, place the ranks and check the hosts' memory, then stop:
                            no connection, no traffic (a workload's check before a long replay)
  --timeout S               deadline of every wait; a dead peer ends the run naming it (default 120)
  --verify                  move a known pattern and check every received byte (same sizes; elements
                            as uint8, reductions as wrapping sums); a wrong byte ends the run naming it
several jobs (run without mpirun: phynet launches one mpirun per job; docs/fabric.md)
  --jobs FILE.toml [--out DIR]  the jobs of a job file at once on one fabric, each alone first;
                            per job time, busbw and slowdown, bytes per host pair and NIC
report
  --report FILE.csv         one row per operation (and per iteration)
  --json FILE.json          operations, summary and per-rank counts as JSON
  --html FILE.html          the report as one self-contained HTML page with charts (as ncclshim
                            report on the JSON; needs Python 3 with matplotlib)
  --rate GBPS               link rate for the efficiency column (busbw / rate), GB/s
  --rows N                  per-operation rows printed on stdout (default 40; all go to files)
  --verbose                 bootstrap and per-rank details on stderr
  --help                    this text
)";
}

}  // namespace nshim::phynet
