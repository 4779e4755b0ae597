// The token all-to-all of a mixture-of-experts job at another expert-parallel size (ncclshim scale
// --ep, docs/scale.md). A captured all-to-all is, per expert group, one send and one receive per
// peer (sends and receives in one NCCL group, uneven counts); the count to peer p is the rank's
// tokens routed to the experts p owns. Experts keep their global order, so with EP' = k x EP old
// peer p's experts go to new peers p*k .. p*k+k-1 (its count spread evenly over them: count / k, one
// more for the first count % k), and with EP = k x EP' old peers q*k .. q*k+k-1 merge into new peer
// q (counts summed). Every rank keeps its tokens, so its send total stays. What a rank receives from
// a new peer is what that peer's template rank sent, by the same rule (so both sides agree).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "common/status.h"
#include "trace/trace_reader.h"

namespace nshim::workload {

// Part `part` of `count` spread evenly over `parts`: count / parts, one more for the first count % parts.
uint64_t spreadPart(uint64_t count, int parts, int part);

class ExpertExchange {
 public:
  // expertComms[rank]: the captured rank's expert-group communicators (id -> their place among its
  // expert groups); every rank must send each peer of one the same number of times and receive as
  // often. oldEp and newEp must divide one another.
  static Result<ExpertExchange> create(const trace::TraceSet& traces,
                                       const std::vector<std::map<uint64_t, int>>& expertComms, int oldEp, int newEp);

  struct NewOp {
    int peer = 0;  // new position in the expert group
    uint64_t count = 0;
  };
  // The ops that replace captured rank `source`'s `ordinal`-th send to (or receive from) old peer
  // `peer` on its expert group `instance`, for the new rank at position `position` of its new expert
  // group, whose members' template ranks are `peerTemplates` (by new position). Empty when the op
  // merges into an earlier one (EP shrinks).
  std::vector<NewOp> expand(bool send, int instance, int peer, uint64_t ordinal, int position,
                            const std::vector<int>& peerTemplates) const;
  // Sends whose count did not divide by k (spread to within one element).
  uint64_t unevenSplits() const { return uneven_; }

 private:
  ExpertExchange(int oldEp, int newEp) : oldEp_(oldEp), newEp_(newEp) {}
  uint64_t sent(int rank, int instance, int peer, uint64_t ordinal) const;

  int oldEp_ = 1, newEp_ = 1;
  // sends_[rank][instance][peer]: the counts the rank sent that peer, in order.
  std::vector<std::map<int, std::vector<std::vector<uint64_t>>>> sends_;
  uint64_t uneven_ = 0;
};

}  // namespace nshim::workload
