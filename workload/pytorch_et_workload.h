// Reader of PyTorch execution traces (the JSON of torch.profiler's ExecutionTraceObserver, PARAM
// et_replay's comms-replay input) into a replay Workload. Only `record_param_comms` nodes and the
// `## process_group:init ##` node are read; every other node is counted and left out.
//
// Input: one file or a directory of per-rank files (its *.json and *.json.gz files whose first 4 KiB,
// decompressed, hold "nodes"; others are ignored and counted). Files may be gzip-compressed, as
// PyTorch's and PARAM's traces usually are: they are read through input_file.h (zlib), whatever their
// name; bytes handed to parsePyTorchEtRank(s) are JSON text (a gzip stream there is refused, naming
// it). The node reading and decoding is pytorch_et_nodes.h's. A file's rank comes from its content:
// the rank argument of an all-reduce, all-gather, reduce-scatter, all-to-all or barrier node is this
// process's rank in the node's process group, mapped to a global rank through the group's members;
// where no such node exists, from a trailing number in the file name (rank-3.json, rank3.json,
// trace_3.json, et.3.json, rank-3.json.gz). The world is the default process group's size from the
// process-group description (the same in every file, or refused), else one more than the highest rank
// that a file, a group or a pg_size names. A directory must hold one file per rank ("rank 1 of 2
// missing"). One file of a job of several ranks is replayed by every rank of the world, as PARAM's comms replay does
// with one trace for all ranks: allowed when all its operations run on the whole world and none is
// point-to-point.
//
// Nodes, in node-id order (PyTorch numbers nodes as they start: execution order across threads):
// collective_name (normalized as PARAM does: lower case, letters only) allreduce(_coalesced) ->
// all-reduce; allgather, _allgather_base, allgather_into_tensor(_coalesced) -> all-gather;
// reduce_scatter, _reduce_scatter_base, reduce_scatter_tensor(_coalesced) -> reduce-scatter;
// broadcast, _broadcast_oop; reduce, _reduce_oop; gather; scatter; send; recv; all_to_all,
// all_to_allv, alltoall_base, all_to_all_single -> all-to-all; barrier -> a 1-element float32
// all-reduce (PyTorch's NCCL barrier all-reduces a one-element tensor). wait and init nodes move
// nothing and are counted. Coalesced calls become one operation of their total count.
// Counts (NCCL's count: per-rank block for all-gather, reduce-scatter, all-to-all; bytes by opBytes):
// all-reduce, broadcast, reduce, gather, send: in_msg_nelems; reduce-scatter, scatter, recv:
// out_msg_nelems (all-gather in, all-to-all in / group size). Where a node has no comms attributes
// (schemas 1.0.1 and 1.0.2, some 1.0.3), its inputs give them: the collective name, the split lists,
// the group size, the tensors' element counts and dtype.
// dtype: PyTorch's names (Float, Half, BFloat16, Double, Int, Long, Byte, Char, Bool, UInt32, UInt64,
// Float8_e4m3fn, Float8_e5m2) map to NCCL types; others of known size (Short, ComplexFloat, ...)
// and unknown ones with a tensor item size are moved as bytes (uint8), said once. No reduction op is
// recorded: sum. The rank argument (the Int before the collective name in the inputs) is the root of
// broadcast/reduce/gather/scatter and the peer of send/recv, both as ranks of the node's group.
// Uneven all-to-all (in_split_size / out_split_size giving different per-peer sizes; splits are dim-0
// rows, each rows * (nelems / sum of splits) elements): one NCCL group of a send per peer with data
// and a receive per peer with data (peer by peer, send first, as PyTorch issues them), each origin
// kAllToAllV, the group ids numbered per rank from 1; the self piece is skipped (PyTorch's NCCL path
// copies it locally), so is a zero-sized piece. Even splits (or none) -> one all-to-all. Operations
// of 0 bytes are left out and counted (Workload::skipped).
// Groups: pg_name's entry in the process-group description (ranks, or all ranks of group_size when
// empty; 1.0.2 traces name the group by backend_id), else global_rank_start/stride/pg_size, else (no
// group information) the whole world, said once; a pg_size of 1 is the rank alone. A communicator's
// id is a hash of its name and members, so that every rank's file yields the same id. Labels by
// shape (labelCommsByShape).
// Times: ExecutionTraceObserver records none: computeNs 0, said. A trace linked with Kineto (Chakra's
// trace_link: `ts`, `inclusive_dur` or `dur` in microseconds on each node) gives issue times, host
// durations (recordedNs) and compute gaps (the time from one comm node's end to the next one's start).
// Sources: "file:line", the line of the node's opening brace.
// Errors (kInvalidArgument) name the file, line, node and field: "x.json:1234: node 42
// (record_param_comms): field 'in_split_size': 3 entries for a group of 4 ranks"; malformed JSON names
// its line and byte.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

struct PyTorchEtOptions {
  int maxWorldSize = 1 << 16;  // the largest world (and group) a trace may describe
  int onlyRank = -1;           // >= 0: only that rank's operations are kept (Workload::onlyRank)
};

// A file, or a directory of per-rank files.
Result<Workload> loadPyTorchEtWorkload(const std::string& path, const PyTorchEtOptions& options);

// One file's bytes, as loadPyTorchEtWorkload reads a single file; `name` is used in sources and
// messages.
Result<Workload> parsePyTorchEtRank(std::string_view text, const std::string& name, const PyTorchEtOptions& options);

// A directory's files (bytes and names, any order), as loadPyTorchEtWorkload reads a directory.
Result<Workload> parsePyTorchEtRanks(const std::vector<std::string_view>& texts, const std::vector<std::string>& names,
                                     const PyTorchEtOptions& options);

}  // namespace nshim::workload
