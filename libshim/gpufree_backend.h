// The GPU-free backend: ncclshim itself is the NCCL, on host buffers, over TCP (ncclCommInitRank*)
// or threads of one process (ncclCommInitAll). Streams are accepted and ignored; operations outside
// a group complete before their call returns (group.h). One function per entry of the API list
// (api_functions.h), declared here with the type nccl.h gives it, so that a definition that strays
// from nccl.h does not compile; defined in gpufree_comm.cc (communicators), gpufree_ops.cc
// (operations) and gpufree_library.cc (the rest).
#pragma once

#include "libshim/nccl_functions.h"

namespace nshim {
namespace gpufree {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // ncclResetDebugInit
#define NS_GPUFREE_DECLARATION(name) decltype(::nccl##name) nccl##name;
NS_NCCL_API_FUNCTIONS(NS_GPUFREE_DECLARATION)
#undef NS_GPUFREE_DECLARATION
#pragma GCC diagnostic pop

}  // namespace gpufree

// The table of the functions above.
const NcclFunctions& gpufreeBackend();

}  // namespace nshim
