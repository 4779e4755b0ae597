// Reader of SimAI workload text (the file AICB writes for SimAI; README "Replaying GPU-free with phynet"): expands its layer table
// into per-rank replay operations on the TP/DP/EP/PP layout of rank_layout.h.
//
// Text: UTF-8 with or without a byte order mark, LF, CRLF or CR line ends (as editors and spreadsheet
// tools save it); UTF-16 is refused.
// Format. Line 1: a policy word, then `key: value` pairs: model_parallel_NPU_group (TP), ep, pp, vpp,
// ga, all_gpus, checkpoints / checkpoint_initiates (a count, then that many layer numbers), and
// optionally pp_comm (bytes, may be written as 8388608.0, with or without the colon). Line 2: the
// number of layer lines (real files disagree with it: a mismatch is a warning, the lines present are
// used). Then one line per layer, whitespace separated, 12 columns:
//   name dependency fwd_compute_ns fwd_op fwd_bytes ig_compute_ns ig_op ig_bytes wg_compute_ns wg_op
//   wg_bytes update_ns
// Ops: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL (and BROADCAST, which older AICB files
// carry), each optionally suffixed _EP or _DP_EP to run on those groups; unsuffixed forward and
// input-grad ops run on TP, weight-grad ops on DP.
//
// Expansion, per iteration and identically on every rank (each on its own groups):
//   forward: for each layer in order, fwd compute then fwd op;
//   backward: for each layer in reverse, ig compute, ig op, wg compute, wg op.
// Compute times accumulate into the computeNs of the rank's next op; NONE ops, zero-byte ops and ops on
// single-member groups (e.g. TP=1) produce no op, so their compute time moves to the next op. Compute
// left after the last op of the run is dropped. The update time and checkpoints are parsed and
// validated but not replayed (SimAI models them analytically).
// SimAI's own rules (in SimAI's source, astra-sim-alibabacloud/astra-sim/workload/), followed by
// default and each switchable (options.simai, --simai-rules), said in the workload's description
// ("; as SimAI: ..."), also where one is off and would have changed something:
//   min-fwd-4096: HYBRID_TRANSFORMER_FWD_IN_BCKWD raises forward sizes in (0, 4096) to 4096 B
//     (Workload.cc, iterate_hybrid_parallel_Transformer_fwd_in_bckwd);
//   micro-first-layer: MICRO replays only the first layer's weight-grad op, once per iteration
//     (Workload.cc, iterate_micro_benchmark);
//   no-broadcast: BROADCAST ops replay nothing: SimAI's parser (Workload.cc) knows only ALLREDUCE,
//     ALLTOALL, ALLGATHER, REDUCESCATTER and makes no collective of any other op; off, they run
//     from root 0.
// and one rule that is not SimAI's, off by default: pp-per-microbatch, the pipeline transfers the
// real job sends. SimAI sends no pp_comm: Layer.cc reads it only for its report's exposed pipeline
// time (2*vpp*GA transfers per boundary) and its issue functions generate only all-reduce,
// all-to-all, all-gather and reduce-scatter. With the rule, PP > 1 and pp_comm > 0, stage s
// receives pp_comm bytes from s-1 before its forward layers and sends them to s+1 after; the
// backward mirrors it (recv from s+1 first, send to s-1 last), on the PP group with peers as stage
// indices; each transfer vpp*ga times. With the rule, PP > 1 and no pp_comm, a warning says that
// no pipeline traffic is replayed.
// Policies: HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER, HYBRID_CUSTOMIZED, HYBRID_DATA_MODEL,
// HYBRID_MODEL_DATA replay all three phases (model_parallel_NPU_group required); DATA replays only
// weight-grad ops (TP defaults to 1); MICRO replays only weight-grad ops and no compute; MODEL and
// DISTRIBUTED_INFERENCE replay forward and input-grad ops (TP defaults to the world).
// Sizes: bytes are each op's whole buffer (nccl-tests size), multiplied by options.scale; count and
// type follow rank_layout.h. A size (or pp_comm) that scaled is beyond the 1 PiB phynet replays is
// an error (1e18, 2^63, 1e300 alike, never read as 0 bytes). World = all_gpus, DP = world / (TP * PP).
// options.worldSize/tp/ep/pp, when non-zero, override the file's values.
// Fewer ranks than the file's groups (options.worldSize, phynet's ranks, below TP or TP*PP, or DP
// below EP): as SimAI-Phy, which forms its groups over all its GPUs whatever mpirun starts
// (network_frontend/phynet/SimAiMain.cc reads -g below 8 as 8; system/Sys.cc
// mock_nccl_grobal_group_init takes TP and EP from the file, PP 1, DP = GPUs / TP), whose processes
// are its first ranks, each group is cut to the ranks there: TP to the world, PP to 1, EP to DP;
// said in one warning. A size given in the options is kept (and refused if it does not fit).
// Errors (kInvalidArgument) read "file:line: field: problem": a truncated file or line, a wrong column
// count, an unknown policy or op, a negative or non-numeric size or time, a size beyond 1 PiB, a
// missing key, a zero or negative group size, a group that does not fit the world.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "workload/workload.h"
#include "workload/workload_options.h"

namespace nshim::workload {

// SimAI's name of a comm op ("ALLREDUCE", ...); nullptr where SimAI has none.
const char* simAiOpName(OpKind kind);

Result<Workload> loadSimAiWorkload(const std::string& path, const WorkloadOptions& options);
// `name` is the file name used in sources ("name:line") and error messages.
Result<Workload> parseSimAiWorkload(std::string_view text, const std::string& name, const WorkloadOptions& options);

}  // namespace nshim::workload
