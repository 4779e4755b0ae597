// Options for expanding a SimAI workload text or an AICB CSV into a replay Workload: how many
// iterations, a byte scale, and the parallel layout when the file does not carry it (or to override
// what it carries). Zero means "take it from the file" for every layout field.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "workload/workload.h"

namespace nshim::workload {

// The rules of SimAI's own reading of its files, followed by default (simai_workload.h says what each
// does and where SimAI does it); --simai-rules turns them off one by one, so that the real job's
// behaviour stays one flag away. pp-per-microbatch is not SimAI's (SimAI sends no pp_comm): it is
// off by default and replays the pipeline traffic the real job sends.
struct SimAiRules {
  bool forwardAtLeast4096 = true;  // "min-fwd-4096": HYBRID_TRANSFORMER_FWD_IN_BCKWD forward sizes in (0, 4096) -> 4096
  bool microFirstLayer = true;     // "micro-first-layer": MICRO replays only the first layer's weight-grad op
  bool noBroadcast = true;         // "no-broadcast": BROADCAST ops replay nothing (SimAI makes no collective of them)
  bool ppPerMicrobatch = false;    // "pp-per-microbatch": vpp*ga pp_comm transfers each way per stage boundary
};

// "all", "none" or a comma list of the rule names above (exactly those on); false and `error` set on
// a bad list.
bool parseSimAiRules(std::string_view text, SimAiRules* out, std::string* error);

struct WorkloadOptions {
  int iterations = 1;  // the whole file's operations are repeated this many times (>= 1)
  double scale = 1.0;  // every message size is multiplied by this (> 0), then rounded
  // Ranks in the job; 0: SimAI all_gpus, or AICB TP*DP*PP from group sizes. Non-zero (phynet's
  // ranks): a SimAI file's groups that do not fit are cut to them, as SimAI-Phy's (simai_workload.h).
  int worldSize = 0;
  int tp = 0;  // tensor-parallel size; 0: from the file
  int ep = 0;  // expert-parallel size (divides DP); 0: from the file
  int pp = 0;  // pipeline stages; 0: from the file
  // The largest world a file (or the options) may describe: the bootstrap connects at most 65536
  // ranks, and a larger size is a typo or a hostile file (it would overflow the layout's products
  // and expand into that many ranks' worth of ops). Every group size is checked against it first.
  int maxWorldSize = 1 << 16;
  SimAiRules simai;  // SimAI files only
  // -1: expand every rank's ops. Otherwise only this rank's ops are kept (Workload::onlyRank); the
  // communicators, the description and the skipped rows are the same as for the whole world.
  int onlyRank = -1;
  // The most pp_comm transfers each way per stage boundary (vpp*ga, rule pp-per-microbatch): real
  // jobs have hundreds; a larger product is refused before it expands.
  int64_t maxPipelineTransfers = 1 << 16;
  // Set: every op is handed here as it is expanded (rank, op, its communicator) and none is kept, so
  // a tool that only counts needs no memory for a world's ops (the workload comes back without ops).
  std::function<void(int rank, const WorkOp& op, const CommGroup& comm)> opSink;
};

}  // namespace nshim::workload
