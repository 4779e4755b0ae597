// A stream of RDMA writes over one RC queue pair, for traffic that is not a collective: the RDMA
// background flows of `phynet --jobs` (phynet/flow/rdma_flow.cc). Opens the RDMA device whose RoCE
// v2 GID holds a given IP address (the engine's device choice, openIbverbsDevice), registers one
// buffer, and connects its QP to the peer's from endpoint records the caller carries over its own
// socket. The sender posts writes of up to the buffer's size into the peer's buffer (signaled every
// few, a bounded number in flight); the receiving side only exposes its buffer. No verbs type leaks
// out of this header, so phynet/ uses it without <infiniband/verbs.h>.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace nshim {

class RdmaWriteStream {
 public:
  // Loads libibverbs and opens the device holding `localAddress` (an IPv4 address), a PD, a buffer
  // of `bufferBytes` registered for remote writes, a CQ and an RC QP in INIT.
  static Result<std::unique_ptr<RdmaWriteStream>> open(const std::string& localAddress, size_t bufferBytes);
  ~RdmaWriteStream();
  RdmaWriteStream(const RdmaWriteStream&) = delete;
  RdmaWriteStream& operator=(const RdmaWriteStream&) = delete;

  const std::string& deviceName() const;
  // The record the peer needs (QP number, PSN, GID, MTU, buffer address and key).
  std::vector<uint8_t> endpoint() const;
  static size_t endpointBytes();
  // INIT -> RTR -> RTS towards the peer's record; `peerName` goes into errors.
  Status connect(const std::vector<uint8_t>& remote, const std::string& peerName);
  // Posts one RDMA write of `bytes` (at most the buffer size) into the peer's buffer, first reaping
  // completions until the send queue has room or `deadline` passes.
  Status write(size_t bytes, Deadline deadline);
  // Reaps completions without waiting; a failed one is an error naming the device and the peer.
  Status poll();
  // Waits until every posted write has completed, or `deadline`.
  Status drain(Deadline deadline);
  // Bytes of the writes known complete.
  uint64_t bytesCompleted() const;

 private:
  struct Impl;
  explicit RdmaWriteStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace nshim
