// Validation of a whole workload before a byte is sent: the structure (ranks, communicator
// membership, roots and peers inside their communicator, sizes that follow the bytes rule and stay
// within kMaxOpBytes), then,
// per communicator, that every member issues the same sequence of collectives (kind, count, type,
// reduction, root, bytes), and that point-to-point traffic pairs up (the k-th send from a to b and
// the k-th receive on b from a carry the same bytes), and that, in the order the replay issues them
// (batches of one NCCL group together, a send waiting for its receive), no communicator deadlocks
// (p2p_order_check.h). The first problem is reported naming the rank, the communicator (id and
// label), the sequence number and the file:line.
#pragma once

#include "common/status.h"
#include "workload/workload.h"

namespace nshim::workload {

// The largest operation replayed (bytes, the nccl-tests size): no fabric moves more in one call,
// and byte counts stay far from overflowing when multiplied by ranks and repetitions.
constexpr uint64_t kMaxOpBytes = uint64_t{1} << 50;

// Ok, or kInvalidArgument with a message naming the first problem. Among collective mismatches on
// different communicators, the one at the lowest position in its communicator's sequence wins.
Status checkWorkload(const Workload& workload);

// The checks of one rank's ops that need no other rank (communicator known and the rank a member,
// root / peer inside it, the size limit, the bytes rule), with checkWorkload's messages: what a
// replay rank that holds only its own ops (Workload::onlyRank) checks before rank_validation.h.
Status checkRankStructure(const Workload& workload, int globalRank);

}  // namespace nshim::workload
