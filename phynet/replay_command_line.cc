// phynet's options (replay_command_line.h): names, values, checks and help, by group.
#include "phynet/replay_command_line.h"

#include <iterator>
#include <utility>

#include "common/command_line.h"
#include "phynet/option_values.h"

namespace nshim::phynet {
namespace {

void addInputOptions(CLI::App& app, ReplayOptions* o) {
  addValueOption(
      app, "--format", "auto|trace|simai|aicb|chakra|pytorch-et",
      [o](const std::string& v) {
        if (!parseInputFormat(v, &o->format)) refuseValue(fmt::format("--format: '{}' ({})", v, inputFormatChoices()));
      },
      "input kind (auto: told by content: docs/foreign_formats.md)")
      ->group("input");
  addValueOption(
      app, "--comm-group", "FILE", [o](const std::string& v) { o->commGroupFile = v; },
      "Chakra: ASTRA-sim's comm-group JSON naming the nodes' pg_name groups\n"
      "(default: comm_group.json beside the .et files, else the whole world)")
      ->group("input");
  const std::pair<const char*, int*> layout[] = {
      {"--world-size", &o->worldSize}, {"--tp", &o->tp}, {"--ep", &o->ep}, {"--pp", &o->pp}, {"--cp", &o->cp}};
  const char* layoutHelp[] = {
      "ranks of a SimAI/AICB job; with --tp, --ep, --pp its layout (default: from\n"
      "the file; world = MPI size; a SimAI file's groups larger than the world are\n"
      "cut to it, as SimAI-Phy's)",
      "tensor-parallel size of a SimAI/AICB job (as --world-size)",
      "expert-parallel size of a SimAI/AICB job (as --world-size)",
      "pipeline-parallel size of a SimAI/AICB job (as --world-size)",
      "context-parallel size of a trace under --resize, where its communicators\n"
      "fit more than one shape (a ring of sends: CP or PP; as `ncclshim scale --cp`)"};
  for (size_t i = 0; i < std::size(layout); ++i) {
    addValueOption(
        app, layout[i].first, "N",
        [name = std::string(layout[i].first), target = layout[i].second](const std::string& v) {
          *target = parseInt(name, v, 1, 1 << 20);
        },
        layoutHelp[i])
        ->group("input");
  }
  addValueOption(
      app, "--simai-rules", "LIST",
      [o](const std::string& v) {
        std::string error;
        if (!parseSimAiRules(v, &o->simaiRules, &error)) refuseValue("--simai-rules: " + error);
      },
      "the rules to follow, exactly those listed (all; none; or a list of);\n"
      "default SimAI's own: min-fwd-4096 (HYBRID_TRANSFORMER_FWD_IN_BCKWD forward\n"
      "ops below 4096 B raised to 4096 B), micro-first-layer (MICRO: the first\n"
      "layer only), no-broadcast (BROADCAST ops replay nothing); not SimAI's, off\n"
      "by default: pp-per-microbatch (vpp*ga pp_comm transfers each way per stage\n"
      "boundary, as the real job; SimAI sends none)")
      ->group("input");
}

// The choices of how the bytes move: transport, NICs, nodes, algorithm, protocol, PXN, NCCL's log.
void addNetworkOptions(CLI::App& app, ReplayOptions* o) {
  addValueOption(
      app, "--transport", "tcp|ibverbs",
      [o](const std::string& v) {
        if (v != "tcp" && v != "ibverbs") refuseValue(fmt::format("--transport: '{}' (tcp or ibverbs)", v));
        o->transport = v;
      },
      "data transport (default tcp)")
      ->group("replay");
  addValueOption(
      app, "--ifname", "LIST", [o](const std::string& v) { o->ifname = v; },
      "socket interface(s), as NCCLSHIM_SOCKET_IFNAME (e.g. eth0, lo): the TCP\n"
      "transport's data and the bootstrap of both; a list (r0,r1) gives local\n"
      "rank i entry i mod length (one NIC per rank, as on GPU hosts)")
      ->group("replay");
  addValueOption(
      app, "--hca", "LIST", [o](const std::string& v) { o->hca = v; },
      "RDMA device(s) for ibverbs, as NCCLSHIM_IB_HCA (rxe0, mlx5_0:1); a list\n"
      "gives local rank i entry i mod length")
      ->group("replay");
  addValueOption(
      app, "--intra-node", "auto|net|shm",
      [o](const std::string& v) {
        if (v != "net" && v != "shm" && v != "auto")
          refuseValue(fmt::format("--intra-node: '{}' (auto, net or shm)", v));
        o->intraNode = v;
      },
      "shm: hops between ranks of one node over shared memory (NCCL's NVLink:\n"
      "that traffic never reaches a NIC), only hops between nodes over\n"
      "--transport; net: every hop over --transport; auto (default): shm when\n"
      "the ranks span several hosts or --gpus-per-node is given (each node on\n"
      "one host), net when every rank is on one host")
      ->group("replay");
  addValueOption(
      app, "--gpus-per-node", "G",
      [o](const std::string& v) { o->gpusPerNode = parseInt("--gpus-per-node", v, 1, 1 << 16); },
      "a node is G consecutive global ranks, as launchers place them (with\n"
      "--intra-node shm they must share a host); default: the ranks of one host")
      ->group("replay");
  addValueOption(
      app, "--algo", "auto|ring|tree|pat",
      [o](const std::string& v) {
        if (!parseAlgorithm(v, &o->algorithm)) refuseValue(fmt::format("--algo: '{}' (auto, ring, tree or pat)", v));
      },
      "algorithm, like NCCL_ALGO: ring; tree: NCCL's double binary tree\n"
      "allreduce between nodes with a chain inside each (NCCLSHIM_NCHANNELS\n"
      "channels, default 2, alternate between its two trees); pat: NCCL's PAT\n"
      "allgather / reducescatter (binomial trees over distances 2^d; only with\n"
      "one rank per node, as NCCL, else the ring). auto (default): what NCCL\n"
      "chose for the call where the trace recorded it (its profiler plugin,\n"
      "NCCLSHIM_PROFILER=1), else NCCLSHIM_ALGO or NCCL_ALGO, else what NCCL's\n"
      "tuner picks for the size and the layout (see --nccl-log).\n"
      "Each channel's messages travel on their own connection")
      ->group("replay");
  addValueOption(
      app, "--proto", "auto|simple|ll|ll128",
      [o](const std::string& v) {
        if (!parseProtocol(v, &o->protocol)) refuseValue(fmt::format("--proto: '{}' (auto, simple, ll or ll128)", v));
      },
      "NCCL's protocol for every collective, like NCCL_PROTO: each message goes\n"
      "on the wire in NCCL's format (LL: each 4-byte word with a 4-byte flag,\n"
      "twice the payload; LL128: 120 payload bytes per 128-byte line), checked\n"
      "and decoded at the receiver. auto (default): NCCL's recorded choice per\n"
      "call, else NCCLSHIM_PROTO or NCCL_PROTO, else what NCCL's tuner picks\n"
      "(see --nccl-log). Point-to-point moves as simple")
      ->group("replay");
  app.add_flag("--pxn", o->pxn,
               "NCCL's PXN: a block for another node goes over the node (shared\n"
               "memory) to the node-mate on the destination's rail, which sends it on\n"
               "its own NIC, so each NIC carries only its rail (NCCLSHIM_PXN=1): for\n"
               "alltoall, gather and scatter, and for a trace's own send/recv through a\n"
               "relay thread per rank that forwards on its own (as NCCL's proxy), so\n"
               "the node-mate need not be in the batch. The report counts a forward\n"
               "with the relay; the model with the sender (host totals agree)")
      ->group("replay");
  addValueOption(
      app, "--nccl-log", "FILE", [o](const std::string& v) { o->ncclLog = v; },
      "the system NCCL's tuner sees, from rank 0's log of the real job\n"
      "(NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH: its ring and tree graph\n"
      "lines and coll channels), for the calls a trace did not record and for\n"
      "SimAI / AICB workloads. Default: what NCCL 2.28.9 described for a node\n"
      "of NVLink GPUs and one 10 Gb/s NIC (1 channel of 1.2 GB/s per graph,\n"
      "2 collective channels): give your cluster's log for its choices")
      ->group("replay");
}

}  // namespace

void addReplayOptions(CLI::App& app, ReplayOptions* o) {
  app.add_option("input", o->input, "the trace / workload to replay");
  addInputOptions(app, o);
  addNetworkOptions(app, o);
  addRunOptions(app, o);
  addJobAndReportOptions(app, o);
}

}  // namespace nshim::phynet
