// The engine's communicator: one transport (the connections of one group of ranks), the tuning
// options of the algorithms, and a sequence counter that tags every operation so that ranks which
// disagree about the operation sequence are caught by the transport's tag check.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "common/clock.h"
#include "model/collective_options.h"
#include "model/node_layout.h"
#include "transport/core/transport.h"

namespace nshim {

class PxnRelay;  // pxn_relay.h

class Communicator {
 public:
  Communicator(std::unique_ptr<Transport> transport, CollectiveOptions options)
      : transport_(std::move(transport)), options_(options), nodes_(NodeLayout::flat(transport_->nranks())) {}

  int rank() const { return transport_->rank(); }
  int nranks() const { return transport_->nranks(); }
  Transport& transport() { return *transport_; }
  const CollectiveOptions& options() const { return options_; }
  // Which node each rank is on (flat unless set); the same on every rank of the communicator.
  const NodeLayout& nodes() const { return nodes_; }
  void setNodes(NodeLayout nodes) { nodes_ = std::move(nodes); }

  // The sequence number of the next collective; equal on all ranks that run the same sequence.
  // Point-to-point operations do not take one (only the two peers take part in them).
  uint64_t nextCollectiveSeq() { return ++operationSeq_; }
  Deadline operationDeadline() const { return Deadline::after(options_.timeoutSeconds); }

  // Scratch memory reused across operations (receive staging for reductions), registered with
  // the transport so that staged receives can be zero-copy.
  char* scratch(size_t bytes);
  size_t scratchBytes() const { return scratch_.size(); }

  // The PXN relay of a trace's own send/recv (pxn_relay.h; phynet --pxn on nodes of several
  // ranks): null unless set.
  PxnRelay* relay() const { return relay_.get(); }
  void setRelay(std::shared_ptr<PxnRelay> relay) { relay_ = std::move(relay); }

 private:
  std::unique_ptr<Transport> transport_;
  CollectiveOptions options_;
  NodeLayout nodes_;
  uint64_t operationSeq_ = 0;
  std::vector<char> scratch_;
  MemoryRegistration scratchRegistration_;  // after scratch_ and transport_: ends before either
  std::shared_ptr<PxnRelay> relay_;         // last: its thread stops and joins first
};

}  // namespace nshim
