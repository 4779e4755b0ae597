// Whole-workload transformations phynet applies after loading, the same for every input format:
// message-size scaling, the --ops / --groups filters, and a fingerprint that lets the ranks check
// that they all read the same workload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/workload.h"

namespace nshim::workload {

// Multiplies every op's count by `scale` (rounded, at least 1 when it was non-zero) and recomputes
// its bytes.
void scaleWorkload(Workload& workload, double scale);

// Keeps only the ops whose kind is in `ops` ("sendrecv" keeps sends and receives) and whose
// communicator label is in `groups`; an empty list keeps everything. Returns the ops removed.
size_t filterWorkload(Workload& workload, const std::vector<std::string>& ops, const std::vector<std::string>& groups);

// FNV-1a over the communicators and every rank's operations (everything that decides traffic); over
// the communicators alone when the workload holds one rank's ops (Workload::onlyRank).
uint64_t workloadFingerprint(const Workload& workload);

// "allreduce count 1024 float32 sum (4096 bytes)", with root or peer where the op has one.
std::string describeOp(const WorkOp& op);

// The communicator as people read it: "0x00000000000012ab (tp)".
std::string commName(const CommGroup& comm);

// Index of `globalRank` in comm.members (its rank in the communicator), -1 if not a member.
int commRankOf(const CommGroup& comm, int globalRank);

}  // namespace nshim::workload
