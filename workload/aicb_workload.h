// Reader of AICB workload / log CSVs (README "Replaying GPU-free with phynet"): one rank's view of a training job's communication,
// replayed by every rank of the job on its own groups of the TP/DP/EP/PP layout of rank_layout.h.
//
// Text: UTF-8 with or without a byte order mark, LF, CRLF or CR line ends (as spreadsheet tools save
// a CSV); UTF-16 is refused.
// Format: a header naming the columns `comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,
// additional,_elapsed_time,algbw,busbw,count`; columns are found by name (comm_type, comm_group and
// msg_size are required; comm_group_size and the rest may be missing). A "[ pp_stageN: [...] ]" banner
// (AICB writes one block per pipeline stage for PP > 1, each with its header) starts the block of
// stage N: the ranks of stage N replay only that block's rows, and a file with blocks must have one
// for every stage of the layout. Other lines starting with '[' ("[rank0 ~ rank127]"), blank lines and
// repeated header lines are skipped. AICB writes rows with str() and no quoting, so a computation row's tuple msg_size
// "((s, b, h), (h, o))" spans several fields: it is rejoined; quoted fields are accepted too. "None",
// empty and -1 (pandas' fill value) mean "absent" in the optional numeric columns.
//
// Rows (CommType.x or x): all_reduce, all_gather(_into_tensor), reduce_scatter(_tensor), all_to_all,
// broadcast (root = src, a communicator rank, default 0), reduce (root = dst, default 0) run on their
// comm_group: tp_group, dp_group, ep_group, ep_dp_group (our dp_ep), ep_tp_group, pp_group,
// embedding_group (first and last stage), all / all_nodes (world). isend / irecv are pipeline
// transfers on the PP group whose direction comes from `additional` (send_prev, send_next, recv_prev,
// recv_next); as in AICB's applyer they are skipped on the stage that has no such neighbour.
// Consecutive isend/irecv rows of a block are one batch (Megatron's batch_isend_irecv: one NCCL group). barrier is
// a 4-byte allreduce on the world. computation adds its _elapsed_time to the compute gap before the
// rank's next op. epoch_end marks an iteration and moves no data. `count` and `stage` are ignored.
//
// Units: msg_size is the op's whole buffer in bytes (nccl-tests size; count/type per rank_layout.h),
// multiplied by options.scale. _elapsed_time is in ms (AICB's measured logs) and becomes recordedNs of
// comm rows. For computation rows it is in ms in a log (a file where some comm row has a time) but in
// ns in a generated workload (no comm row timed): AICB's applyer sleeps _elapsed_time / 1e9 s there.
//
// Layout: options.tp/ep/pp/worldSize when non-zero; otherwise TP, EP, PP from the largest
// comm_group_size of the tp_group, ep_group, pp_group rows (1 when the file has no such rows), DP from
// dp_group rows (or world / (TP*PP) when the world size is given), world = TP*DP*PP. EP without a
// size on its ep_group rows (AICB's MoE CSVs write None) comes from ep_tp_group (TP x EP ranks) or
// from dp_group / ep_dp_group (DP / EP ranks) when the file has those sizes. A group the file
// uses whose size is unknown is an error naming the flag that gives it (--tp, --ep, --pp, or
// --world-size for DP: AICB's micro_test files have no comm_group_size column). A row whose comm_group_size differs from the layout's group
// is a warning (AICB writes 1 for pp_group p2p rows). On fewer ranks than the file's job (AICB's
// model CSVs are 128-rank jobs) the data-parallel groups (dp, ep, ep_dp, all) fold: they shrink with
// the world, said once per group, message sizes as written; a TP, PP or embedding group larger than
// the world is an error.
// options.iterations repeats the whole file. Each op's source is "file:line".
// Errors (kInvalidArgument) read "file:line: field: problem": no header, a missing column, a truncated
// row, a wrong column count, an unknown comm_type / comm_group / additional, a negative or non-numeric
// size or time, a size that times options.scale is beyond the 1 PiB phynet replays (1e18, 2^63,
// 1e300: never read as 0 bytes), a group that does not fit the world.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "workload/workload.h"
#include "workload/workload_options.h"

namespace nshim::workload {

// AICB's comm_type of a collective ("all_reduce", ...: the first its reader knows); nullptr where
// AICB has none.
const char* aicbCommTypeName(OpKind kind);

Result<Workload> loadAicbWorkload(const std::string& path, const WorkloadOptions& options);
// `name` is the file name used in sources ("name:line") and error messages.
Result<Workload> parseAicbWorkload(std::string_view text, const std::string& name, const WorkloadOptions& options);

}  // namespace nshim::workload
