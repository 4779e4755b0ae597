// A transport that moves each message in the lines of the NCCL protocol it was posted under
// (Transport::setProtocol, common/nccl_protocol.h): LL and LL128 messages are encoded into lines in a
// buffer of their own and sent as such, and received lines are checked and decoded into the
// receive's buffer before the receive completes; Simple messages pass straight through. Wraps the
// transport that carries the bytes (TCP, ibverbs, shared memory or several routed by node), whose
// byte counters then count the lines: what NCCL would have put on the wire.
#pragma once

#include <memory>

#include "transport/core/transport.h"

namespace nshim {

std::unique_ptr<Transport> createProtocolFramingTransport(std::unique_ptr<Transport> inner);

}  // namespace nshim
