// Small synthetic traces for the job-shape and scaling tests: a job of `world` ranks whose
// communicators are given by their members (in communicator-rank order), each carrying one op on
// every member; a send is a ring (each member sends to the next and receives from the previous).
#pragma once

#include <string>
#include <vector>

#include "trace/trace_format.h"
#include "trace/trace_reader.h"

namespace nshim::workload {

struct SyntheticComms {
  std::vector<std::vector<int>> groups;  // one communicator per group
  trace::OpCode op = trace::OpCode::kAllReduce;
  uint64_t count = 256;
};

// Communicator ids 100, 101, ... in the order given; file paths job/rank<R>.jsonl.
inline trace::TraceSet mixedJob(int world, const std::vector<SyntheticComms>& all) {
  trace::TraceSet set;
  set.files.resize(world);
  for (int rank = 0; rank < world; ++rank) {
    set.files[rank].path = "job/rank" + std::to_string(rank) + ".jsonl";
    set.files[rank].header.globalRank = rank;
  }
  uint64_t n = 0, id = 100;
  for (const SyntheticComms& comms : all) {
    for (const std::vector<int>& group : comms.groups) {
      for (size_t r = 0; r < group.size(); ++r) {
        trace::TraceFile& file = set.files[group[r]];
        trace::CommEntry comm;
        comm.record.event = trace::CommEvent::kInit;
        comm.record.commId = id;
        comm.record.nranks = static_cast<int32_t>(group.size());
        comm.record.rank = static_cast<int32_t>(r);
        comm.record.globalRank = group[r];
        comm.n = n++;
        comm.line = static_cast<int64_t>(file.comms.size() + file.ops.size() + 2);
        file.comms.push_back(comm);
        trace::OpEntry entry;
        entry.record.op = comms.op;
        entry.record.commId = id;
        entry.record.count = comms.count;
        entry.record.datatype = 7;  // float32
        entry.record.root = trace::kNoRank;
        entry.record.peer = trace::kNoRank;
        entry.record.rank = comm.record.rank;
        entry.record.nranks = comm.record.nranks;
        entry.n = n++;
        entry.line = comm.line + 1;
        if (comms.op == trace::OpCode::kSend) {
          const int size = static_cast<int>(group.size());
          entry.record.peer = (comm.record.rank + 1) % size;
          file.ops.push_back(entry);
          entry.record.op = trace::OpCode::kRecv;
          entry.record.peer = (comm.record.rank + size - 1) % size;
          entry.record.seq = 1;
          entry.n = n++;
          entry.line = comm.line + 2;
        }
        file.ops.push_back(entry);
      }
      ++id;
    }
  }
  return set;
}

inline trace::TraceSet syntheticJob(int world, const std::vector<std::vector<int>>& groups,
                                    trace::OpCode op = trace::OpCode::kAllReduce, uint64_t count = 256) {
  return mixedJob(world, {SyntheticComms{groups, op, count}});
}

}  // namespace nshim::workload
