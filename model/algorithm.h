// The names of the engine's allreduce algorithms, shared by the options, the workload (a trace's
// record of NCCL's choice) and the reports.
#pragma once

#include <cstdint>
#include <string_view>

namespace nshim {

// kAuto is the ring (recursive doubling below CollectiveOptions::smallAllReduceBytes on 2^k ranks);
// kRing and kTree force NCCL's ring or its double binary tree (tree_allreduce.cc); kPat NCCL's PAT
// for allgather and reduce-scatter on one rank per node (pat_schedule.h).
enum class Algorithm : uint8_t { kAuto = 0, kRing = 1, kTree = 2, kPat = 3 };
const char* algorithmName(Algorithm algorithm);  // "auto", "ring", "tree", "pat"
// "auto" / "ring" / "tree" / "pat" in any case (NCCL writes "RING", "TREE", "PAT"). False for
// anything else.
bool parseAlgorithm(std::string_view text, Algorithm* out);

}  // namespace nshim
