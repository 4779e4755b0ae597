// Executes workload operations on one communicator with the engine, on host buffers: a per-
// communicator arena sized once for the largest batch (within the --max-buffer cap, op_pieces.h)
// and reused by every operation. A batch is
// one op, or the ops of one ncclGroup on this communicator: its collectives run in issue order and
// its sends and receives are issued together (runPointToPoint), so grouped pairs cannot deadlock.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "collectives/collectives.h"
#include "collectives/communicator.h"
#include "common/status.h"
#include "model/call_choice.h"
#include "phynet/aliased_memory.h"
#include "phynet/data_check.h"
#include "phynet/op_pieces.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

struct OpTiming {
  int64_t startNs = 0;  // this rank's steady clock
  int64_t endNs = 0;
};

// No cap: every op runs whole (--verify, and the default of the functions below).
constexpr uint64_t kNoCap = UINT64_MAX;

// Bytes the batch needs: collectives reuse the whole arena one after the other; the sends of a
// batch share one source region (each its own with `distinctSends`, for --verify), its receives
// get distinct regions. Each side is at most `capBytes`: larger ops run in pieces, and receives
// beyond the cap reuse the region (their content is not looked at without --verify).
BufferNeed batchBufferNeed(std::span<const WorkOp* const> ops, int nranks, bool distinctSends = false,
                           uint64_t capBytes = kNoCap);

// Host memory of one communicator on one rank (zero-filled, so reductions stay finite), registered
// with the communicator's transport when given one (zero copy over ibverbs, as NCCL's registered
// buffers; the arena must then be destroyed before the transport).
class CommArena {
 public:
  // Before the first reserve: > 0 backs each side with that much memory, mapped over and over its
  // whole size (aliased_memory.h: data is not kept, for replays that do not check it).
  void setStaging(size_t physicalBytes) { stagingBytes_ = physicalBytes; }
  void reserve(const BufferNeed& need, Transport* transport = nullptr);
  char* send() { return send_.data(); }
  char* recv() { return recv_.data(); }
  size_t bytes() const { return send_.physical() + recv_.physical(); }

 private:
  // One side: plain memory, or aliased staging.
  class Side {
   public:
    void grow(size_t bytes, size_t staging, Transport* transport);
    char* data() { return aliased_.data() != nullptr ? aliased_.data() : plain_.data(); }
    size_t physical() const { return aliased_.data() != nullptr ? aliased_.physical() : plain_.size(); }

   private:
    std::vector<char> plain_;
    AliasedMemory aliased_;
    MemoryRegistration registration_;  // after the memory: deregistered before it is freed
  };
  size_t stagingBytes_ = 0;
  Side send_;
  Side recv_;
};

// Runs a batch; timing[i] receives ops[i]'s start and end (the sends and receives of a batch share
// theirs). `failedOp` is set to the index of the op that failed. With a DataCheck (--verify), the
// ops run in their checkedForm on patterned buffers and every received byte is checked (outside
// the timed region); without one, ops larger than `capBytes` run in pieces (op_pieces.h).
Status runBatch(Communicator& comm, CommArena& arena, std::span<const WorkOp* const> ops, std::span<OpTiming> timing,
                size_t* failedOp, DataCheck* check = nullptr, uint64_t capBytes = kNoCap);

}  // namespace nshim::phynet
