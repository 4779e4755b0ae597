// phynet --verify: every operation moves a known pattern and every received byte is checked.
// Each op keeps its byte count (so the traffic is the same) but runs on uint8 elements, and a
// reduction becomes a wrapping uint8 sum: exact and independent of the order in which the ranks'
// contributions are combined, so the expected result is known whatever the algorithm. The pattern
// of a rank's send buffer is a pseudo-random function of (op index on the communicator, rank);
// point-to-point messages use (k-th message of the pair, sender, receiver). Stale data from an
// earlier op therefore never passes for the right answer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "phynet/workload_names.h"
#include "workload/workload.h"

namespace nshim::phynet {

// The op as it runs under --verify: same bytes, uint8 elements, reductions as sums.
WorkOp checkedForm(const WorkOp& op);

// Writes bytes [offset, offset + size) of the pattern stream `seed` to `out`.
void fillPattern(uint64_t seed, size_t offset, uint8_t* out, size_t size);

// The pattern and result checks of one communicator on one rank (used by its executor thread only).
class DataCheck {
 public:
  DataCheck(int rank, int nranks) : rank_(rank), nranks_(nranks), sentTo_(nranks), receivedFrom_(nranks) {}

  // Collectives: fill before, check after (`op` in its checkedForm). Each pair is one op, in the
  // order every member runs them.
  void fillCollective(const WorkOp& op, uint8_t* send);
  Status checkCollective(const WorkOp& op, const uint8_t* recv);

  // Point-to-point: the k-th message of a pair on this communicator.
  void fillSend(int peer, uint8_t* buf, size_t bytes);
  // Reserves the index of the next receive from `peer`; check it with checkReceive after the batch.
  uint64_t nextReceive(int peer) { return receivedFrom_[peer]++; }
  Status checkReceive(int peer, uint64_t index, const uint8_t* buf, size_t bytes);

  uint64_t bytesChecked() const { return bytesChecked_; }

 private:
  uint64_t collectiveSeed(int rank) const;
  // Compares `got` with the pattern slice, or with the sum of every rank's slice when `sum`.
  Status compare(const WorkOp& op, const uint8_t* got, size_t size, bool sum, int source, size_t offset,
                 const char* what);

  int rank_;
  int nranks_;
  uint64_t collectives_ = 0;  // collectives checked so far on this communicator
  std::vector<uint64_t> sentTo_;
  std::vector<uint64_t> receivedFrom_;
  uint64_t bytesChecked_ = 0;
  static constexpr size_t kCheckWindowBytes = size_t{1} << 20;
  std::vector<uint8_t> expected_;  // scratch: one window of expected bytes
  std::vector<uint8_t> one_;       // scratch: one member's window of a sum
};

}  // namespace nshim::phynet
