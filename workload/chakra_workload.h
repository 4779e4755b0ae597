// Reader of Chakra execution traces (MLCommons Chakra; ASTRA-sim's workload input) into a replay
// Workload: one file per rank, `NAME.<rank>.et` (chakra_file.h has the framing).
//
// Input: a directory holding one set of `NAME.<rank>.et` files, one such file (its siblings of the
// same NAME are read with it), or the path prefix NAME itself (as ASTRA-sim's
// --workload-configuration takes it); a file not named so is a trace of one rank. A file may be
// gzip-compressed, as Chakra's own readers allow. The world is the highest rank found plus one; a rank below it
// without a file is refused ("rank 1 of 2 missing: NAME.1.et"), so is a rank named by a group or a
// peer beyond it.
//
// Nodes: COMM_COLL_NODE (comm_type, comm_size), COMM_SEND_NODE (comm_dst), COMM_RECV_NODE (comm_src)
// become operations; COMP_NODE durations (duration_micros) become the compute time replayed before the
// next operation (`--pace recorded`); every other node type is left out and counted. A comm node's
// own duration_micros, where the file has it, is its recorded time.
// Sizes: comm_size is taken as the nccl-tests size of the call (the whole buffer: for all-gather the
// gathered buffer, for reduce-scatter and all-to-all the send buffer), in bytes. Chakra has no data
// type: counts are bytes (uint8), said once; a per-rank size that does not divide by the group is
// refused. BARRIER becomes a one-byte all-reduce (NCCL has no barrier: PyTorch's is a small
// all-reduce); REDUCE_SCATTER_BLOCK is a reduce-scatter. Broadcast, reduce, gather and scatter take the
// node's `root` attribute (a rank in the group), else 0.
// Groups: a comm node's `pg_name` attribute names a process group: of the list a PyTorch-derived ET
// carries in a METADATA_NODE where a file has one, else of the comm-group file (ASTRA-sim's JSON:
// {"<name>": [global ranks], ...}), given as options.commGroupFile or found beside the traces as
// `comm_group.json` (chakra_groups.h); a node without pg_name, with pg_name "" or "0" (ASTRA-sim's whole world), or in a
// trace without a comm-group file runs on the whole world (said once in the description). Send and
// receive peers (comm_dst, comm_src) are global ranks, as ASTRA-sim has them, mapped into the node's
// group when it names one.
// Order: each rank's nodes run in one order, a topological order of their data and control
// dependencies (ties by node id). phynet then issues them in that order, one executor per
// communicator: operations of one communicator keep the order, and an operation that Chakra makes wait
// for an operation of another communicator is not held for it (the replay can overlap them where the
// job could not); the description counts such dependencies. Consecutive sends and receives on one
// communicator with no compute between them are issued as one group (ncclGroupStart/End), as NCCL
// programs issue exchanges, so that a pair of ranks sending to each other cannot deadlock.
// Errors name the file and the node ("x.0.et: node 17 (COMM_COLL_NODE): attribute 'comm_size': ..."); an
// operation's source (WorkOp::source, shown by reports) is "file:<node id>", a binary file having no lines.
#pragma once

#include <string>

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

struct ChakraOptions {
  std::string commGroupFile;  // "" : comm_group.json beside the traces, if there is one
  int maxWorldSize = 1 << 16;
  int onlyRank = -1;  // >= 0: only that rank's operations are kept (Workload::onlyRank)
};

// Where a Chakra trace's files are: the NAME prefix and the files by rank (rank -> path).
struct ChakraFileSet {
  std::string prefix;
  std::vector<std::string> pathByRank;  // "" where a rank's file is missing
};

// Finds the files of `path` (directory, one file, or prefix); an error when there are none, or when a
// directory holds more than one NAME.
Result<ChakraFileSet> findChakraFiles(const std::string& path);

Result<Workload> loadChakraWorkload(const std::string& path, const ChakraOptions& options);

// The ranks' file contents (rank -> bytes, names for messages) and the comm-group JSON text ("" none)
// as a Workload: what loadChakraWorkload does after reading the files (and what the fuzz target runs).
Result<Workload> parseChakraWorkload(const std::vector<std::string>& rankBytes, const std::vector<std::string>& names,
                                     const std::string& commGroupJson, const ChakraOptions& options);

}  // namespace nshim::workload
