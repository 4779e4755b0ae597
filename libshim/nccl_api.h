// The real nccl.h plus the export macros of the C API layer: definitions get default visibility (the
// rest of the library is hidden) and the pnccl* profiling names are aliases of the nccl* ones.
#pragma once

#include <nccl.h>

#include <cstddef>

// Defines an exported NCCL C function.
#define NS_API extern "C" __attribute__((visibility("default")))

// Exports pnccl<name> as an alias of nccl<name> (defined in the same file), with the prototype
// nccl.h declares for it; <name> as in the API list (api_functions.h): NS_PNCCL_ALIAS(AllReduce).
#define NS_PNCCL_ALIAS(name) \
  extern "C" __attribute__((visibility("default"), alias("nccl" #name))) decltype(nccl##name) pnccl##name;

static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId must be 128 bytes");
static_assert(NCCL_VERSION_CODE >= 22800, "ncclshim needs the nccl.h of NCCL 2.28 or newer");
