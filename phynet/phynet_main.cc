// phynet: `mpirun -np N phynet [options] <trace dir | SimAI .txt | AICB .csv>`. Every rank loads the
// input; the ranks check they read the same workload; rank 0 validates it and the verdict is
// broadcast (a refusal ends every rank non-zero before any traffic); the transports are
// bootstrapped; the replay runs; rank 0 gathers the timings and counters and reports.
// A failure during the replay ends this rank at once (exit 1) with a message naming the op, the
// communicator and the peer: its peers then fail the same way, and mpirun ends the job.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "collectives/collectives.h"
#include "common/clock.h"
#include "common/command_line.h"
#include "common/env.h"
#include "common/host_identity.h"
#include "common/log.h"
#include "common/log_capture.h"
#include "common/main_fence.h"
#include "common/nccl_env.h"
#include "common/peak_rss.h"
#include "common/settings.h"
#include "phynet/failure_place.h"
#include "phynet/html_report.h"
#include "phynet/input_loader.h"
#include "phynet/job_runner.h"
#include "phynet/job_start.h"
#include "phynet/memory_plan.h"
#include "phynet/mpi_bootstrap.h"
#include "phynet/mpi_session.h"
#include "phynet/node_map.h"
#include "phynet/op_packing.h"
#include "phynet/rank_endpoint.h"
#include "phynet/rank_messages.h"
#include "phynet/rank_validation.h"
#include "phynet/replay.h"
#include "phynet/report.h"
#include "phynet/report_output.h"
#include "phynet/workload_names.h"
#include "transport/bootstrap/nic_list.h"
#include "workload/workload_transform.h"

namespace nshim::phynet {
namespace {

constexpr size_t kVerdictBytes = 8192;
constexpr int kCounterFields = 15;
constexpr int kPeerFields = 5;  // PeerTraffic, per global rank, after the counters
constexpr useconds_t kLingerBeforeExitUs = 500'000;

void say(int rank, const std::string& text) {
  std::fprintf(stderr, "phynet: rank %d: %s\n", rank, text.c_str());
  std::fflush(stderr);
}

// Lines every rank may have logged (the same on most): each distinct one once, from rank 0, with
// the ranks that said it (rank_messages.h).
void sayOnce(const std::vector<std::string>& lines, MpiSession& mpi, const char* phase) {
  std::vector<std::vector<int64_t>> gathered = mpi.gatherToRoot(packLines(lines), phase);
  if (mpi.rank() != 0) return;
  std::vector<std::vector<std::string>> perRank;
  for (const std::vector<int64_t>& words : gathered) perRank.push_back(unpackLines(words));
  for (const std::string& line : mergeRankMessages(perRank)) std::fprintf(stderr, "phynet: %s\n", line.c_str());
  std::fflush(stderr);
}

std::vector<int64_t> packResult(const RankReplayResult& result) {
  const RankCounters& c = result.counters;
  std::vector<int64_t> out{static_cast<int64_t>(c.ops),
                           static_cast<int64_t>(c.opBytes),
                           static_cast<int64_t>(c.wireSent),
                           static_cast<int64_t>(c.wireReceived),
                           static_cast<int64_t>(c.modelSent),
                           c.runStartNs,
                           c.runEndNs,
                           static_cast<int64_t>(c.bytesVerified),
                           static_cast<int64_t>(c.wireZeroCopy),
                           c.readyNs,
                           static_cast<int64_t>(c.plannedBufferBytes),
                           static_cast<int64_t>(c.peakRssBytes),
                           c.stepPeriod,
                           c.stepFirst,
                           c.stepCount};
  for (const PeerTraffic& p : c.peers) {
    for (uint64_t field : {p.sent, p.wire, p.messages, p.model, p.links}) out.push_back(static_cast<int64_t>(field));
  }
  for (const OpTiming& t : result.timings) {
    out.push_back(t.startNs);
    out.push_back(t.endNs);
  }
  return out;
}

void unpackResult(const std::vector<int64_t>& in, int worldSize, RankCounters* c, std::vector<OpTiming>* timings) {
  c->ops = static_cast<uint64_t>(in[0]);
  c->opBytes = static_cast<uint64_t>(in[1]);
  c->wireSent = static_cast<uint64_t>(in[2]);
  c->wireReceived = static_cast<uint64_t>(in[3]);
  c->modelSent = static_cast<uint64_t>(in[4]);
  c->runStartNs = in[5];
  c->runEndNs = in[6];
  c->bytesVerified = static_cast<uint64_t>(in[7]);
  c->wireZeroCopy = static_cast<uint64_t>(in[8]);
  c->readyNs = in[9];
  c->plannedBufferBytes = static_cast<uint64_t>(in[10]);
  c->peakRssBytes = static_cast<uint64_t>(in[11]);
  c->stepPeriod = in[12];
  c->stepFirst = in[13];
  c->stepCount = in[14];
  size_t i = kCounterFields;
  c->peers.resize(static_cast<size_t>(worldSize));
  for (PeerTraffic& p : c->peers) {
    p = PeerTraffic{static_cast<uint64_t>(in[i]), static_cast<uint64_t>(in[i + 1]), static_cast<uint64_t>(in[i + 2]),
                    static_cast<uint64_t>(in[i + 3]), static_cast<uint64_t>(in[i + 4])};
    i += kPeerFields;
  }
  for (; i + 1 < in.size(); i += 2) timings->push_back({in[i], in[i + 1]});
}

// How long a rank that finished waits for the others: its own replay time scaled by how much more
// work (ops and bytes) the busiest rank has, four times over, plus the timeout. Every rank's work
// is gathered (each holds only its own ops).
double finishWaitSeconds(const Workload& w, int self, double mySeconds, double timeout, MpiSession& mpi) {
  double sum = 0;
  if (self < static_cast<int>(w.ranks.size())) {
    for (const WorkOp& op : w.ranks[self].ops) sum += 65536.0 + static_cast<double>(op.bytes);
  }
  const std::vector<uint64_t> all = mpi.allGather(static_cast<uint64_t>(std::min(sum, 1e19)), "replay: work per rank");
  const double mine = std::max(sum, 1.0);
  const double busiest = static_cast<double>(*std::max_element(all.begin(), all.end()));
  return timeout + 4.0 * mySeconds * std::max(1.0, busiest / mine) + 30.0;
}

// Rank 0 receives every rank's operations, for the per-operation report (the only place where
// one rank holds the world's ops, and only after the replay).
Workload gatherWorkload(const Workload& mine, MpiSession& mpi) {
  const int self = mpi.rank();
  Workload all;
  if (self == 0) {
    all.worldSize = mine.worldSize;
    all.comms = mine.comms;
    all.indexComms();
    all.description = mine.description;
    all.skipped = mine.skipped;
    all.recordedClock = mine.recordedClock;
    all.ncclEnv = mine.ncclEnv;
    all.ncclEnvNote = mine.ncclEnvNote;
    all.ranks.resize(static_cast<size_t>(mine.worldSize));
  }
  mpi.gatherToRootEach(
      packOps(self < static_cast<int>(mine.ranks.size()) ? mine.ranks[self].ops : std::vector<WorkOp>{}),
      "gathering the operations for the report", [&all](int g, std::vector<int64_t>& words) {
        if (g >= static_cast<int>(all.ranks.size())) return;
        all.ranks[g].globalRank = g;
        Result<std::vector<WorkOp>> ops = unpackOps(words);
        if (ops.ok()) all.ranks[g].ops = std::move(ops).value();
        else
          say(0, fmt::format("rank {}'s operations for the report did not arrive intact ({}): its rows are "
                             "missing from the report",
                             g, ops.status().message()));
      });
  return all;
}

// Finds every rank's host and NIC: host identities are gathered, each rank takes its entry of the
// NIC lists (--ifname / --hca, else the environment) by its local rank and checks that the NIC
// exists; a rank whose NIC is missing names its host and NIC, and every rank ends. The endpoints of
// all ranks come back for the report (and --verbose prints each).
bool placeRanks(const ReplayOptions& options, MpiSession& mpi, TransportChoice* choice,
                std::vector<RankEndpoint>* endpoints) {
  const int self = mpi.rank();
  std::vector<std::string> hostIds = mpi.allGatherStrings(hostIdentity(), "placement: host identities");
  const int localRank = localRankOf(hostIds, self, localRankFromEnvironment());
  SocketInterface interface = SocketInterface::fromEnvironment();
  const std::string ifnames = options.ifname.empty() ? settingString(Setting::NCCLSHIM_SOCKET_IFNAME) : options.ifname;
  const std::string hcas = options.hca.empty() ? settingString(Setting::NCCLSHIM_IB_HCA) : options.hca;
  interface.spec = nicForLocalRank(ifnames, localRank);
  choice->interface = interface;
  choice->tcp.interface = interface;
  choice->ibverbs.bootstrapInterface = interface;
  choice->ibverbs.hca = nicForLocalRank(hcas, localRank);
  Result<TransportKind> kind = transportKindFromName(options.transport);
  const std::vector<std::string> labels = hostLabels(hostIds);
  // NCCL's nodes: the tree's layout, and with shared memory within nodes the ranks that share it.
  // --intra-node auto: shared memory when the ranks span several hosts (a node = a host, as NCCL's
  // GPUs of one host talk over NVLink) or --gpus-per-node says where the nodes are, and each node's
  // ranks share a host; the network for every hop when all ranks are on one host (a test of the
  // network itself).
  Result<std::vector<int>> shared = nodesOfRanks(hostIds, options.gpusPerNode, /*mustShareHost=*/true);
  const bool severalHosts = std::set<std::string>(hostIds.begin(), hostIds.end()).size() > 1;
  choice->severalHosts = severalHosts;
  const bool useShm = options.intraNode == "shm" ||
                      (options.intraNode == "auto" && shared.ok() && (severalHosts || options.gpusPerNode > 0));
  Result<std::vector<int>> nodes = useShm || options.intraNode == "shm"
                                       ? std::move(shared)
                                       : nodesOfRanks(hostIds, options.gpusPerNode, /*mustShareHost=*/false);
  if (!nodes.ok()) {  // the same verdict on every rank
    if (self == 0) say(self, nodes.status().message());
    return false;
  }
  choice->nodeOfRank = std::move(nodes).value();
  if (useShm) {
    choice->intraNodeShm = true;
    choice->shm = ShmOptions::fromEnvironment();
    choice->shm.timeoutSeconds = options.timeoutSeconds;
  }
  Result<RankEndpoint> mine =
      kind.ok() ? resolveEndpoint(kind.value(), interface, choice->ibverbs, hostIds[self], labels[self], localRank)
                : Result<RankEndpoint>(kind.status());
  const int bad = mpi.firstFailing(!mine.ok(), "placement: NICs");
  if (bad >= 0) {
    if (bad == self) say(self, fmt::format("no usable NIC: {}", mine.status().message()));
    return false;
  }
  for (const std::string& line : mpi.allGatherStrings(encodeEndpoint(mine.value()), "placement: endpoints")) {
    Result<RankEndpoint> decoded = decodeEndpoint(line);
    endpoints->push_back(decoded.ok() ? decoded.value() : RankEndpoint{});
  }
  if (options.verbose) say(self, describeEndpoint(mine.value(), labels[self]));
  return true;
}

// Every host must hold its ranks' buffers (memory_plan.h): rank 0 decides on everyone's available
// memory and says which host falls short before any traffic; every rank then ends. Without
// --max-buffer, the default is first lowered (and said) until every host's ranks fit comfortably.
bool memoryFits(ReplayOptions& options, const Workload& workload, const std::vector<RankEndpoint>& endpoints,
                MpiSession& mpi) {
  MemoryCheckInput check;
  check.caps = candidateCaps(options.maxBufferBytes);
  check.available = mpi.allGather(availableMemoryBytes(), "memory: available bytes");
  check.hosts = hostLabels(endpoints);
  check.verify = options.verify;
  check.capBytes = options.maxBufferBytes;
  check.scale = options.scale;
  const RankMemoryFacts mine =
      rankMemoryFacts(workload, mpi.rank(), options.verify, check.caps, CollectiveOptions::fromEnvironment());
  std::vector<std::vector<int64_t>> gathered = mpi.gatherToRoot(packMemoryFacts(mine), "memory: each rank's needs");
  for (const std::vector<int64_t>& words : gathered) {
    check.ranks.emplace_back();
    unpackMemoryFacts(words, check.caps.size(), &check.ranks.back());
  }
  uint64_t cap = options.maxBufferBytes;
  if (!options.verify && !options.maxBufferGiven && mpi.rank() == 0) {
    const uint64_t fitting = fittingCapBytes(check, kComfortableShare);
    if (fitting != 0 && fitting < cap) {
      say(0,
          fmt::format("--max-buffer {}M instead of the default {}M, so that every host's ranks fit in {:.0f}% of its "
                      "available memory (the same bytes on the wire, in more pieces)",
                      fitting >> 20, cap >> 20, kComfortableShare * 100));
      cap = fitting;
    }
  }
  mpi.broadcast(&cap, sizeof(cap), 0, "memory: buffer cap");
  options.maxBufferBytes = check.capBytes = cap;
  char verdict[kVerdictBytes] = {};
  if (mpi.rank() == 0) std::snprintf(verdict, sizeof(verdict), "%s", checkReplayMemory(check).c_str());
  mpi.broadcast(verdict, sizeof(verdict), 0, "memory verdict");
  if (verdict[0] == '\0') return true;
  if (mpi.rank() == 0) say(0, fmt::format("refusing to replay (no traffic was sent): {}", verdict));
  return false;
}

// The NCCL settings in force (common/nccl_env.h), with --algo / --proto over NCCL_ALGO / NCCL_PROTO.
std::vector<NcclSettingInForce> settingsInForce(const ReplayOptions& options) {
  std::vector<NcclSettingInForce> settings = ncclSettingsInForce();
  auto flag = [&settings](const char* name, const char* option, const std::string& value) {
    auto it =
        std::find_if(settings.begin(), settings.end(), [&](const NcclSettingInForce& s) { return s.name == name; });
    if (it == settings.end()) {
      it = settings.insert(settings.end(), NcclSettingInForce{});
      it->name = name;
    }
    if (it->source == NcclSource::kCapture && it->captured.empty()) it->captured = it->value;
    it->source = NcclSource::kOverride;
    it->via = option;
    it->value = value;
    it->read = true;
  };
  if (options.algorithm != Algorithm::kAuto) flag("NCCL_ALGO", "--algo", algorithmName(options.algorithm));
  if (options.protocol != Protocol::kAuto) flag("NCCL_PROTO", "--proto", protocolName(options.protocol));
  return settings;
}

// What loading measured, for the validation phase's lines.
struct LoadFigures {
  double seconds = 0;
  uint64_t peakRss = 0;
};

// Load: every rank loads its own ops of the input; the lowest failing rank explains. What the
// loaders log is said once.
bool loadPhase(const ReplayOptions& options, MpiSession& mpi, std::optional<LoadedInput>* input, LoadFigures* figures) {
  const int self = mpi.rank();
  setFenceActivity("loading " + options.input);
  std::optional<LogCapture> loadLog(std::in_place);
  const int64_t loadStartNs = nowNs();
  Result<LoadedInput> loaded = loadInput(options, mpi.size(), self);  // this rank's ops only
  figures->seconds = (nowNs() - loadStartNs) * 1e-9;
  figures->peakRss = peakResidentBytes();
  sayOnce(loadLog->take(), mpi, "load: log lines");
  loadLog.reset();
  const int badLoad = mpi.firstFailing(!loaded.ok(), "load");
  if (badLoad >= 0) {
    if (badLoad == self) say(self, fmt::format("cannot load {}: {}", options.input, loaded.status().message()));
    return false;
  }
  input->emplace(std::move(loaded).value());
  return true;
}

// Validate: the ranks check the workload together (rank_validation.h), the verdict to everyone;
// rank 0 says what was validated and what loading cost, and the loaders' notes are said once.
bool validatePhase(const ReplayOptions& options, const LoadedInput& input, const LoadFigures& load, MpiSession& mpi,
                   RankValidation* validation) {
  const int self = mpi.rank();
  const Workload& workload = input.workload;
  setFenceActivity("validating " + options.input);
  const int64_t checkStartNs = nowNs();
  *validation = validateAcrossRanks(input, workloadFingerprint(workload), mpi);
  const double checkSeconds = (nowNs() - checkStartNs) * 1e-9;
  const std::vector<uint64_t> peakRss = mpi.allGather(std::max(load.peakRss, peakResidentBytes()), "load: peak RSS");
  if (!validation->verdict.empty()) {
    if (self == 0) say(self, fmt::format("refusing to replay (no traffic was sent): {}", validation->verdict));
    return false;
  }
  if (self == 0) {
    std::fprintf(stderr, "phynet: validated %llu operations on %zu communicators across %d ranks%s: %s\n",
                 static_cast<unsigned long long>(validation->totalOps), validation->usedComms.size(),
                 workload.worldSize,
                 validation->filteredOut ? fmt::format(" ({} filtered out)", validation->filteredOut).c_str() : "",
                 workload.description.c_str());
    std::fprintf(stderr, "phynet: rank 0 loaded it in %.2f s, peak RSS %.0f MiB\n", load.seconds,
                 static_cast<double>(load.peakRss) / (1 << 20));
    const auto [lowest, highest] = std::minmax_element(peakRss.begin(), peakRss.end());
    std::fprintf(stderr,
                 "phynet: each rank holds only its own operations: peak RSS per rank %.0f-%.0f MiB (highest "
                 "on rank %d); the ranks checked the workload in %.2f s (%llu operations examined in detail)\n",
                 static_cast<double>(*lowest) / (1 << 20), static_cast<double>(*highest) / (1 << 20),
                 static_cast<int>(highest - peakRss.begin()), checkSeconds,
                 static_cast<unsigned long long>(validation->opsExamined));
  }
  sayOnce(
      [&] {
        std::vector<std::string> notes;
        for (const std::string& note : input.notes) notes.push_back("note: " + note);
        return notes;
      }(),
      mpi, "load: notes");
  return true;
}

// Place: each rank's NIC and node (placeRanks), then whether every host holds its ranks' buffers
// (memoryFits, which may lower the default --max-buffer).
bool placePhase(ReplayOptions& options, const Workload& workload, MpiSession& mpi, TransportChoice* choice,
                std::vector<RankEndpoint>* endpoints) {
  const double timeout = options.timeoutSeconds;
  choice->name = options.transport;
  choice->tcp = TcpOptions::fromEnvironment();
  choice->tcp.timeoutSeconds = timeout;
  choice->ibverbs = IbverbsOptions::fromEnvironment();
  choice->ibverbs.timeoutSeconds = timeout;
  if (!placeRanks(options, mpi, choice, endpoints)) return false;
  setFenceActivity("checking the hosts' memory");
  return memoryFits(options, workload, *endpoints, mpi);
}

// The collectives' options for the replay: NCCL's algorithms (NCCL has no recursive doubling: the
// ring for small allreduces too, unless NCCLSHIM_RD_THRESHOLD asks for it), then what the command
// line forces, then the system NCCL described in --nccl-log (every rank reads it: the same verdict
// everywhere).
bool collectiveOptionsFor(const ReplayOptions& options, MpiSession& mpi, CollectiveOptions* collectives) {
  *collectives = CollectiveOptions::fromEnvironment();
  collectives->timeoutSeconds = options.timeoutSeconds;
  collectives->doGpuWork = options.verify || options.gpuWorkOnCpu;
  if (!settingIsSet(Setting::NCCLSHIM_RD_THRESHOLD)) collectives->smallAllReduceBytes = 0;
  if (options.algorithm != Algorithm::kAuto) {
    collectives->algorithm = options.algorithm;
    if (options.algorithm == Algorithm::kRing) collectives->smallAllReduceBytes = 0;
  }
  if (options.protocol != Protocol::kAuto) collectives->protocol = options.protocol;
  if (options.pxn) collectives->pxn = true;
  if (!options.ncclLog.empty()) {
    Result<TunerSystem> system = tunerSystemFromNcclLog(options.ncclLog, 1, 1);
    if (!system.ok()) {
      if (mpi.rank() == 0) say(mpi.rank(), fmt::format("--nccl-log: {}", system.status().message()));
      return false;
    }
    collectives->ncclSystem = *system;
  }
  return true;
}

// Connect: the communicators the workload uses are bootstrapped (a root may be busy connecting an
// earlier communicator for up to the timeout), then every rank meets at the start line.
bool connectPhase(const ReplayOptions& options, const Workload& workload, const RankValidation& validation,
                  MpiSession& mpi, TransportChoice* choice, BootstrapOutcome* boot) {
  const double timeout = options.timeoutSeconds;
  if (!collectiveOptionsFor(options, mpi, &choice->collectives)) return false;
  for (int rank : options.delayRanks) {  // every rank checks: the same verdict everywhere
    if (rank >= workload.worldSize || options.delayMicroseconds * 1e-6 >= timeout) {
      if (mpi.rank() == 0) {
        say(0, rank >= workload.worldSize
                   ? fmt::format("--delay: rank {} is not a rank of this {}-rank job", rank, workload.worldSize)
                   : fmt::format("--delay: {:g} us is not shorter than --timeout {:g} s, the deadline of every wait",
                                 options.delayMicroseconds, timeout));
      }
      return false;
    }
  }
  choice->verbose = options.verbose;
  mpi.setPhaseSeconds(2 * timeout + 30);
  *boot = bootstrapCommunicators(workload, validation.usedComms, mpi, *choice);
  if (!boot->status.ok()) {
    if (boot->localFailure || mpi.rank() == 0) say(mpi.rank(), boot->status.message());
    return false;
  }
  mpi.setPhaseSeconds(timeout + 30);
  if (double late = waitForJobStart(); late > 0.05 && mpi.rank() == 0)
    say(0, fmt::format("started {:.3f} s after the jobs' shared start (launch took longer)", late));
  mpi.barrier("start of the replay");
  return true;
}

// Replay: this rank's ops over its communicators; a failure ends this rank at once (see the top of
// the file). Rank 0 gets every rank's packed timings and counters back; the transports are closed
// after everyone has finished.
std::vector<std::vector<int64_t>> replayPhase(const ReplayOptions& options, const Workload& workload,
                                              const std::vector<RankEndpoint>& endpoints, MpiSession& mpi,
                                              BootstrapOutcome* boot) {
  const int self = mpi.rank();
  const double timeout = options.timeoutSeconds;
  setFenceActivity("replaying " + options.input);
  ReplayConfig config;
  config.pace = options.pace;
  config.iterations = options.iterations + options.warmup;
  config.stallSeconds = timeout + 10;
  config.timeoutSeconds = timeout;
  config.showProgress = self == 0;
  config.verify = options.verify;
  config.maxBufferBytes = options.maxBufferBytes;
  config.stagingBytes = options.stagingBytes >= 0 ? static_cast<uint64_t>(options.stagingBytes)
                                                  : 2 * static_cast<uint64_t>(envBytes("NCCL_BUFFSIZE", 4 << 20));
  if (std::find(options.delayRanks.begin(), options.delayRanks.end(), self) != options.delayRanks.end()) {
    config.delayNs = static_cast<int64_t>(options.delayMicroseconds * 1e3);
    config.delayEvery = options.delayEvery;
  }
  config.startTogether = [&mpi] { mpi.barrier("the start of timing (every rank's buffers ready)"); };
  Result<RankReplayResult> replayed = replayRank(workload, self, boot->comms, config);
  if (!replayed.ok()) {
    const std::string& why = replayed.status().message();
    say(self, fmt::format("replay failed: {}{}", why, fabricPlaceOfFailure(why, self, endpoints)));
    std::fflush(stdout);
    // Peers may be blocked on us: leave without MPI_Finalize (mpirun then ends the job), after a
    // moment for mpirun to forward this message and for our peers to print theirs.
    usleep(kLingerBeforeExitUs);
    _exit(1);
  }
  const RankReplayResult& result = replayed.value();
  double mySeconds = (result.counters.runEndNs - result.counters.runStartNs) * 1e-9;
  mpi.setPhaseSeconds(finishWaitSeconds(workload, self, mySeconds, timeout, mpi));
  mpi.barrier("end of the replay (waiting for the other ranks)");
  mpi.setPhaseSeconds(timeout + 30);
  std::vector<std::vector<int64_t>> gathered = mpi.gatherToRoot(packResult(result), "gathering the report");
  boot->comms.clear();  // close the transports after everyone has finished
  return gathered;
}

// Report (rank 0): the text table, then the CSV, JSON and HTML files asked for. Returns the exit
// code (1 when a file could not be written).
int reportPhase(const ReplayOptions& options, const Workload& everyRank, const TransportChoice& choice,
                const std::vector<RankEndpoint>& endpoints, const std::vector<std::vector<int64_t>>& gathered,
                int worldSize) {
  int rc = 0;
  ReportInput in;
  in.workload = &everyRank;
  in.iterations = options.iterations;
  in.warmup = options.warmup;
  in.rateGBps = options.rateGBps;
  in.collectives = choice.collectives;
  in.timings.resize(worldSize);
  in.counters.resize(worldSize);
  for (int r = 0; r < worldSize; ++r) unpackResult(gathered[r], worldSize, &in.counters[r], &in.timings[r]);
  in.endpoints = endpoints;
  in.nodeOfRank = choice.nodeOfRank;
  in.paced = options.pace == Pace::kRecorded;
  in.sharedClock = !choice.severalHosts;                 // one host: one clock
  if (choice.intraNodeShm && options.gpusPerNode > 0) {  // nodes within a host: the traffic tables are by node
    for (int g = 0; g < worldSize; ++g) in.endpoints[g].hostId = fmt::format("node{}", choice.nodeOfRank[g]);
  }
  ReplayReport report = buildReport(in);
  report.ncclSettings = settingsInForce(options);
  report.ncclNote = everyRank.ncclEnvNote;
  const std::string transportText =
      !choice.intraNodeShm ? options.transport
      : options.gpusPerNode > 0
          ? fmt::format("{} between nodes, shm within (nodes of {} ranks)", options.transport, options.gpusPerNode)
          : fmt::format("{} between hosts, shm within", options.transport);
  TextHeader header{transportText, options.pace == Pace::kFast ? "fast" : "recorded", options.scale, options.verify,
                    options.verify || options.gpuWorkOnCpu};
  printReport(stdout, report, header, options.maxRows);
  for (const auto& [path, status] :
       {std::pair{options.csvPath, options.csvPath.empty() ? Status::Ok() : writeCsvReport(options.csvPath, report)},
        std::pair{options.jsonPath,
                  options.jsonPath.empty() ? Status::Ok() : writeJsonReport(options.jsonPath, report, header)}}) {
    if (!status.ok()) {
      say(0, status.message());
      rc = 1;
    } else if (!path.empty()) {
      // stdout, like the report: mpirun forwards stdout and stderr separately and in chunks, so a
      // stderr line could land inside a report line (a CI run saw that once)
      std::printf("phynet: wrote %s\n", path.c_str());
    }
  }
  if (!options.htmlPath.empty()) {  // the page, from the JSON just written (html_report.h)
    Status page = writeHtmlReport(options.htmlPath, options.jsonPath, report, header, everyRank);
    if (page.ok()) {
      std::printf("phynet: wrote %s\n", options.htmlPath.c_str());
    } else {
      say(0, page.message());
      rc = 1;
    }
  }
  return rc;
}

// The command: options and settings, then the phases in order; each phase's failure has been said
// by the time it returns, and every rank leaves with the same code.
int run(int argc, char** argv) {
  // Whole lines to mpirun's output forwarding, so that stderr lines never land inside a table row.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  Result<ReplayOptions> parsed = parseReplayOptions(argc, argv);
  if (wantsJobs(argc, argv) && (!parsed.ok() || !parsed->help)) {  // no MPI in this process: mpirun per job
    if (parsed.ok()) return runJobs(parsed->jobsPath, parsed->jobsOutDir);
    std::fprintf(stderr, "phynet: %s (see --help)\n", parsed.status().message().c_str());
    return 2;
  }
  const double timeout = parsed.ok() ? parsed->timeoutSeconds : 120;
  MpiSession mpi(&argc, &argv, timeout + 30);
  const int self = mpi.rank();
  setLogRank(self);
  if (!parsed.ok()) {
    if (self == 0) std::fprintf(stderr, "phynet: %s (see --help)\n", parsed.status().message().c_str());
    return 2;
  }
  ReplayOptions& options = parsed.value();  // memoryFits may lower the default --max-buffer
  if (options.help) {
    if (self == 0) printHelpText(replayUsage(), stdout);
    return 0;
  }
  const Status settings = validateSettings();  // every rank checks its own environment
  const int badSettings = mpi.firstFailing(!settings.ok(), "settings");
  if (badSettings >= 0) {
    if (badSettings == self) say(self, fmt::format("{} ('ncclshim env' shows every setting)", settings.message()));
    return 2;
  }

  std::optional<LoadedInput> input;
  LoadFigures loadFigures;
  if (!loadPhase(options, mpi, &input, &loadFigures)) return 1;
  const Workload& workload = input->workload;
  // The job's NCCL settings travel with its trace: honoured where this environment sets none.
  useCapturedNcclEnv(workload.ncclEnv);
  RankValidation validation;
  if (!validatePhase(options, *input, loadFigures, mpi, &validation)) return 1;
  TransportChoice choice;
  std::vector<RankEndpoint> endpoints;
  if (!placePhase(options, workload, mpi, &choice, &endpoints)) return 1;
  if (options.checkOnly) {
    if (self == 0) std::fprintf(stderr, "phynet: --check: the workload can be replayed as given (no traffic sent)\n");
    return 0;
  }
  BootstrapOutcome boot;
  if (!connectPhase(options, workload, validation, mpi, &choice, &boot)) return 1;
  const std::vector<std::vector<int64_t>> gathered = replayPhase(options, workload, endpoints, mpi, &boot);
  const Workload everyRank = gatherWorkload(workload, mpi);  // rank 0: the world's ops; others: empty

  int rc = 0;
  setFenceActivity("writing the report");
  if (self == 0) rc = reportPhase(options, everyRank, choice, endpoints, gathered, mpi.size());
  mpi.barrier("report written");
  return rc;
}

}  // namespace
}  // namespace nshim::phynet

int main(int argc, char** argv) {
  return nshim::runFenced("phynet", [&] { return nshim::phynet::run(argc, argv); });
}
