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
// Ops: NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL (and BROADCAST, root 0, which older AICB
// files carry), each optionally suffixed _EP or _DP_EP to run on those groups; unsuffixed forward and
// input-grad ops run on TP, weight-grad ops on DP.
//
// Expansion, per iteration and identically on every rank (each on its own groups):
//   forward: for each layer in order, fwd compute then fwd op;
//   backward: for each layer in reverse, ig compute, ig op, wg compute, wg op.
// Compute times accumulate into the computeNs of the rank's next op; NONE ops, zero-byte ops and ops on
// single-member groups (e.g. TP=1) produce no op, so their compute time moves to the next op. Compute
// left after the last op of the run is dropped. The update time and checkpoints are parsed and
// validated but not replayed (SimAI models them analytically).
// SimAI's own rules, followed by default and each switchable (options.simai, --simai-rules), and
// said in the workload's description ("; as SimAI: ..."), also where one is off and would have
// changed something: min-fwd-4096, HYBRID_TRANSFORMER_FWD_IN_BCKWD raises forward sizes in (0, 4096)
// to 4096 B (SimAI's iterate_hybrid_parallel_Transformer_fwd_in_bckwd); pp-per-microbatch, vpp*ga
// pp_comm transfers each way per stage boundary and iteration (SimAI's exposed pipeline time counts
// 2*vpp*GA of them per boundary); micro-first-layer, MICRO replays only the first layer's weight-grad
// op, once per iteration (SimAI's iterate_micro_benchmark).
// Policies: HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER, HYBRID_CUSTOMIZED, HYBRID_DATA_MODEL,
// HYBRID_MODEL_DATA replay all three phases (model_parallel_NPU_group required); DATA replays only
// weight-grad ops (TP defaults to 1); MICRO replays only weight-grad ops and no compute; MODEL and
// DISTRIBUTED_INFERENCE replay forward and input-grad ops (TP defaults to the world).
// Pipeline: with PP > 1 and pp_comm > 0, stage s receives pp_comm bytes from s-1 before its forward
// layers and sends them to s+1 after; the backward mirrors it (recv from s+1 first, send to s-1
// last), on the PP group with peers as stage indices; each transfer vpp*ga times (pp-per-microbatch;
// once with the rule off). With PP > 1 and
// no pp_comm, pipeline traffic is skipped with a warning.
// Sizes: bytes are each op's whole buffer (nccl-tests size), multiplied by options.scale; count and
// type follow rank_layout.h. World = all_gpus, DP = world / (TP * PP). options.worldSize/tp/ep/pp,
// when non-zero, override the file's values.
// Errors (kInvalidArgument) read "file:line: field: problem": a truncated file or line, a wrong column
// count, an unknown policy or op, a negative or non-numeric size or time, a missing key, a zero or
// negative group size, a group that does not fit the world.
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
Result<Workload> parseSimAiWorkload(std::string_view text, const std::string& name,
                                    const WorkloadOptions& options);

}  // namespace nshim::workload
