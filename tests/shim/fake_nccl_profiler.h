/* The fake NCCL's profiler side (fake_nccl_profiler.cc): what fake_nccl.c calls so that a plugin
 * named by NCCL_PROFILER_PLUGIN sees the events real NCCL 2.28 raises. Without NCCL_PROFILER_PLUGIN
 * every hook returns at once. C linkage: fake_nccl.c is C. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A communicator was created (init) / is going away (finalize). */
void fakeProfilerCommInit(void* comm, uint64_t commHash, int nranks, int rank);
void fakeProfilerCommFinalize(void* comm);
/* An API call, inside it on the caller's thread: coll = 1 for a collective (root: its root or -1),
 * 0 for a send / recv (root: the peer). Launched at once outside a group, at the group's end inside. */
void fakeProfilerCall(void* comm, int coll, const char* func, size_t count, int datatype, int root);
void fakeProfilerGroupStart(void);
void fakeProfilerGroupEnd(void);

#ifdef __cplusplus
}
#endif
