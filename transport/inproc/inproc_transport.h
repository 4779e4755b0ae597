// In-process transport: ranks are threads of one process and messages are memcpy'd from the
// sender's buffer into the receiver's. Used for exact, fast tests of the algorithms and for
// ncclCommInitAll. Same matching rule as every transport (k-th send meets k-th receive per pair).
#pragma once

#include <memory>
#include <vector>

#include "transport/core/transport.h"

namespace nshim {

// Creates the transports of `nranks` ranks that talk to each other; element r is rank r's.
std::vector<std::unique_ptr<Transport>> createInProcessTransports(int nranks);

}  // namespace nshim
